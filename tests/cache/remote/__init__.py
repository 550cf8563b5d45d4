"""The remote cache tier's process-level tests, against real Redis and nginx
WebDAV servers on loopback (remote_servers.py)."""
