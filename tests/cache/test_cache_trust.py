"""Who made a cache entry: signed exports, trusted keys, and imports that
accept only what a trusted key signed (`kiln cache key ...`)."""

import json
import re
import stat
import subprocess

import pytest

from .conftest import ENTRIES, MODULE, assert_rejected, blob_digest, read_tar, write_tar

PUBLIC_LINE = re.compile(r"^kiln-ed25519 [A-Za-z0-9+/]{43}= (\S+)$")
MANIFEST = "manifest"
SIGNATURE = "manifest.sig"


def blob_name(digest):
    return f"objects/{digest[:2]}/{digest[2:]}"


def metadata_of(members):
    """Every entry's metadata: blob name → parsed JSON."""
    found = {}
    for name, data in members.items():
        if data.startswith(b"kiln-cache-entry 1\n"):
            found[name] = json.loads(data.split(b"\n", 1)[1])
    return found


def poison(members, kind):
    """The attack: one byte of an entry's payload changed, the blob and the
    metadata re-digested, stored under the entry's original key. Returns the
    new members and {old digest: new digest}."""
    name, entry = next((n, m) for n, m in metadata_of(members).items() if m["kind"] == kind)
    old_payload = entry["blobs"][0]["digest"]
    payload = bytearray(members[blob_name(old_payload)])
    payload[len(payload) // 2] ^= 0x01
    new_payload = blob_digest(bytes(payload))
    metadata = members[name].replace(old_payload.encode(), new_payload.encode())
    old_metadata = name.replace("objects/", "").replace("/", "")
    new_metadata = blob_digest(metadata)
    poisoned = {n: d for n, d in members.items() if n not in (name, blob_name(old_payload))}
    poisoned[blob_name(new_payload)] = bytes(payload)
    poisoned[blob_name(new_metadata)] = metadata
    assert json.loads(metadata.split(b"\n", 1)[1])["key"] == entry["key"]
    return poisoned, {old_payload: new_payload, old_metadata: new_metadata}


def build_objects(rig, module, out):
    """`kiln build --emit object` (host code); returns its output files."""
    result = rig.run("build", module, "--emit", "object", "-o", out, "-v")
    assert result.returncode == 0, result.stderr
    return result, {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


@pytest.fixture
def target(rig, tmp_path):
    """Switches the rig to a fresh, empty cache to import into."""
    rig.cache = tmp_path / "target"
    rig.env["KILN_CACHE_DIR"] = str(rig.cache)
    return rig.cache


# Keys.


def test_generate_makes_a_private_key_file_and_prints_its_public_line(rig):
    result = rig.run("cache", "key", "generate", "--name", "ci", check=True)
    line = result.stdout.strip().splitlines()[-1]
    assert PUBLIC_LINE.match(line) and line.endswith(" ci"), result.stdout
    key = rig.config / "keys" / "ci.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600, "the private key is not mode 0600"
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700, "the keys folder is not mode 0700"
    assert b"-----BEGIN PRIVATE KEY-----" in key.read_bytes()
    exported = rig.run("cache", "key", "export-public", check=True).stdout.strip()
    assert exported == line, "export-public does not print the key generate printed"
    listed = rig.run("cache", "key", "list", check=True).stdout
    assert "ci" in listed and str(key) in listed, listed


def test_generate_refuses_to_replace_a_key(rig):
    rig.make_key("ci", trust=False)
    before = (rig.config / "keys" / "ci.key").read_bytes()
    result = rig.run("cache", "key", "generate", "--name", "ci")
    assert result.returncode == 1 and "exists already" in result.stderr, result.stderr
    assert (rig.config / "keys" / "ci.key").read_bytes() == before, "a key was replaced"


def test_bad_key_names_are_refused(rig):
    result = rig.run("cache", "key", "generate", "--name", "../evil")
    assert result.returncode == 1 and "not a key name" in result.stderr, result.stderr
    assert not (rig.config / "evil.key").exists()


def test_a_key_file_others_can_read_is_refused(rig, tmp_path):
    rig.build(rig.write("kernels.py"))
    rig.make_key("ci")
    key = rig.config / "keys" / "ci.key"
    key.chmod(0o644)
    archive = tmp_path / "a.tar"
    result = rig.run("cache", "export", archive)
    assert result.returncode == 1, result.stdout
    assert "chmod 600" in result.stderr and str(key) in result.stderr, result.stderr
    assert not archive.exists(), "an archive was written with a key others can read"


def test_a_huge_key_file_is_an_error_not_a_crash(rig):
    rig.make_key("ci", trust=False)
    key = rig.config / "keys" / "ci.key"
    key.write_bytes(b"kiln signing key: ci\n" + b"#" * (1 << 20) + b"\n" + key.read_bytes())
    for command in (("cache", "key", "list"), ("cache", "key", "export-public", "ci")):
        result = rig.run(*command)
        assert result.returncode == 1, f"{command}: exit {result.returncode}\n{result.stderr}"
        assert str(key) in result.stderr and "error" in result.stderr, result.stderr


def test_export_without_a_key_is_refused_with_a_hint(rig, tmp_path):
    rig.build(rig.write("kernels.py"))
    archive = tmp_path / "a.tar"
    result = rig.run("cache", "export", archive)
    assert result.returncode == 1, result.stdout
    assert "kiln cache key generate" in result.stderr and "--unsigned" in result.stderr
    assert not archive.exists()


def test_export_with_several_keys_asks_which(rig, tmp_path):
    rig.build(rig.write("kernels.py"))
    rig.make_key("one")
    rig.make_key("two")
    result = rig.run("cache", "export", tmp_path / "a.tar")
    assert result.returncode == 1 and "--sign-with" in result.stderr, result.stderr
    result = rig.run("cache", "export", tmp_path / "a.tar", "--sign-with", "two", check=True)
    assert "signed by 'two'" in result.stdout, result.stdout


def test_trust_and_untrust_edit_the_trusted_keys_file_keeping_comments(rig, tmp_path):
    line = rig.make_key("ci", trust=False)
    trusted = tmp_path / "kiln-trusted-keys"
    trusted.write_text("# keys of our CI\n")
    rig.run("cache", "key", "trust", line, "--trusted-keys", trusted, check=True)
    assert trusted.read_text() == "# keys of our CI\n" + line + "\n"
    again = rig.run("cache", "key", "trust", line, "--trusted-keys", trusted, check=True)
    assert "already trusted" in again.stdout
    fingerprint = re.search(r"SHA256:\S+(?=\))", again.stdout)[0]
    rig.run("cache", "key", "untrust", fingerprint, "--trusted-keys", trusted, check=True)
    assert trusted.read_text() == "# keys of our CI\n", "untrust left the key or lost the comment"
    result = rig.run("cache", "key", "untrust", "ci", "--trusted-keys", trusted)
    assert result.returncode == 1 and "trusts no key named 'ci'" in result.stderr


def test_trust_reads_key_lines_from_standard_input(rig):
    line = rig.make_key("ci", trust=False)
    result = subprocess.run(rig.command("cache", "key", "trust", "-"), input=line + "\n",
                            capture_output=True, text=True, env=rig.env, timeout=60)
    assert result.returncode == 0 and "trusted 'ci'" in result.stdout, result.stderr
    assert (rig.config / "trusted-keys").read_text() == line + "\n"


def test_a_key_file_given_by_the_environment_signs_exports(rig, tmp_path):
    rig.build(rig.write("kernels.py"))
    key = tmp_path / "secret" / "ci.key"
    result = rig.run("cache", "key", "generate", "--name", "ci", "--file", key, check=True)
    line = result.stdout.strip().splitlines()[-1]
    assert not (rig.config / "keys").exists(), "--file also wrote into the keys folder"
    assert rig.run("cache", "key", "export-public", key, check=True).stdout.strip() == line
    env = dict(rig.env, KILN_SIGNING_KEY=str(key))
    result = rig.run("cache", "export", tmp_path / "a.tar", env=env)
    assert result.returncode == 0 and "signed by 'ci'" in result.stdout, result.stderr


def test_trust_refuses_another_key_under_a_trusted_name(rig, tmp_path):
    first = rig.make_key("ci", trust=True)
    other = rig.make_key("ci2", trust=False).replace(" ci2", " ci")
    result = rig.run("cache", "key", "trust", other)
    assert result.returncode == 1 and "another key named 'ci'" in result.stderr, result.stderr
    assert (rig.config / "trusted-keys").read_text() == first + "\n"


def test_trust_refuses_two_keys_of_one_name_at_once(rig, tmp_path):
    first = rig.make_key("ci", trust=False)
    second = rig.make_key("ci2", trust=False).replace(" ci2", " ci")
    both = tmp_path / "both.pub"
    both.write_text(first + "\n" + second + "\n")
    result = rig.run("cache", "key", "trust", both)
    assert result.returncode == 1 and "two keys to trust are named 'ci'" in result.stderr, (
        result.stderr)
    assert not (rig.config / "trusted-keys").exists(), "a refused trust wrote the file"


def test_a_trusted_keys_file_anyone_may_change_is_refused(rig, exported, tmp_path):
    trusted = rig.config / "trusted-keys"
    trusted.chmod(0o666)
    result = rig.run("cache", "import", write_tar(tmp_path / "a.tar", exported))
    assert result.returncode == 1 and "chmod o-w" in result.stderr, result.stderr
    assert str(trusted) in result.stderr, result.stderr
    assert not rig.cache.exists(), "the import went on to open the cache"
    trusted.chmod(0o644)
    rig.run("cache", "import", tmp_path / "a.tar", check=True)


def test_a_malformed_trusted_keys_file_is_named_with_its_line(rig, exported, tmp_path):
    trusted = tmp_path / "bad-keys"
    trusted.write_text("# fine\nkiln-ed25519 AAAA ci\n")
    result = rig.run("cache", "import", write_tar(tmp_path / "a.tar", exported),
                     "--trusted-keys", trusted)
    assert result.returncode == 1 and f"{trusted}:2:" in result.stderr, result.stderr
    assert rig.stats()["entries"] == 0


# Import: what it accepts.


def test_a_signed_archive_imports_when_its_signer_is_trusted(rig, exported, tmp_path):
    result = rig.run("cache", "import", write_tar(tmp_path / "a.tar", exported), check=True)
    assert f"imported {ENTRIES} entries" in result.stdout and "signed by 'ci'" in result.stdout
    assert MANIFEST in exported and SIGNATURE in exported, "the export has no signed manifest"


def test_a_trusted_keys_file_from_the_flag_or_environment_replaces_the_default(
        rig, exported, tmp_path):
    committed = tmp_path / "kiln-trusted-keys"
    committed.write_text((rig.config / "trusted-keys").read_text())
    (rig.config / "trusted-keys").write_text("")
    archive = write_tar(tmp_path / "a.tar", exported)
    assert_rejected(rig, archive, "not among the trusted keys")
    rig.run("cache", "import", archive, "--trusted-keys", committed, check=True)
    rig.run("cache", "clear", check=True)
    env = dict(rig.env, KILN_TRUSTED_KEYS=str(committed))
    result = rig.run("cache", "import", archive, env=env)
    assert result.returncode == 0 and f"imported {ENTRIES} entries" in result.stdout, result.stderr
    missing = rig.run("cache", "import", archive, "--trusted-keys", tmp_path / "nope")
    assert missing.returncode == 1 and "nope" in missing.stderr, missing.stderr


# Import: each refusal, with nothing written.


def test_an_unsigned_archive_is_refused(rig, tmp_path, target):
    source = tmp_path / "source"
    rig.build(rig.write("kernels.py"), env=dict(rig.env, KILN_CACHE_DIR=str(source)))
    archive = tmp_path / "a.tar"
    result = rig.run("cache", "export", archive, "--unsigned",
                     env=dict(rig.env, KILN_CACHE_DIR=str(source)))
    assert result.returncode == 0 and "unsigned" in result.stderr, result.stderr
    assert_rejected(rig, archive, "it is not signed")


def test_an_unknown_signer_is_refused(rig, exported, tmp_path):
    (rig.config / "trusted-keys").write_text("")
    result = assert_rejected(rig, write_tar(tmp_path / "a.tar", exported),
                             "signed by 'ci' (SHA256:")
    assert "not among the trusted keys" in result.stderr and "kiln cache key trust" in result.stderr


def test_a_tampered_manifest_is_refused(rig, exported, tmp_path):
    members = dict(exported)
    first, rest = members[MANIFEST].split(b"\nentry ", 1)
    members[MANIFEST] = first + b"\n" + b"entry " + rest.split(b"\n", 1)[1]  # one entry left out
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "does not match what it signs")


def test_a_truncated_signature_is_refused(rig, exported, tmp_path):
    members = dict(exported)
    members[SIGNATURE] = members[SIGNATURE][:60]
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "signature is malformed")


def test_a_signature_without_its_manifest_is_refused(rig, exported, tmp_path):
    members = {n: d for n, d in exported.items() if n != MANIFEST}
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "no manifest")


def test_an_entry_outside_the_signed_manifest_is_refused(rig, exported, tmp_path):
    # A whole, consistent entry of another build, added to a signed archive.
    other = tmp_path / "other"
    env = dict(rig.env, KILN_CACHE_DIR=str(other))
    module = rig.write("other.py", MODULE.replace("i + 1", "i + 2"))
    rig.build(module, env=env)
    rig.run("cache", "export", tmp_path / "other.tar", env=env, check=True)
    extra = {n: d for n, d in read_tar(tmp_path / "other.tar").items()
             if n.startswith("objects/") and n not in exported}
    assert extra
    members = dict(exported, **extra)
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "is not in the signed manifest")


def test_a_blob_the_manifest_lists_but_the_archive_lacks_is_refused(rig, exported, tmp_path):
    entry = next(iter(metadata_of(exported).values()))
    members = {n: d for n, d in exported.items() if n != blob_name(entry["blobs"][0]["digest"])}
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "the signed manifest lists")


def test_a_signed_archive_still_gets_every_structural_check(rig, exported, tmp_path):
    # A valid signature excuses nothing: the member checks come first.
    members = dict(exported)
    members["objects/../../evil"] = b"x"
    assert_rejected(rig, write_tar(tmp_path / "a.tar", members), "'..'", tmp_path / "evil")


# The attack the signature exists for.


@pytest.fixture
def host_export(rig, tmp_path):
    """A signed export of host objects, the honest build's objects, and a
    fresh cache to import into."""
    module = rig.write("kernels.py")
    _, honest = build_objects(rig, module, tmp_path / "honest")
    rig.make_key("ci")
    archive = tmp_path / "host.tar"
    rig.run("cache", "export", archive, check=True)
    members = read_tar(archive)
    rig.cache = tmp_path / "victim"
    rig.env["KILN_CACHE_DIR"] = str(rig.cache)
    return module, honest, members


def test_a_poisoned_host_object_repacked_under_its_key_is_refused(rig, host_export, tmp_path):
    module, honest, members = host_export
    poisoned, renamed = poison(members, "host")
    # As repacked: every digest right, the signed manifest as it was.
    assert_rejected(rig, write_tar(tmp_path / "p1.tar", poisoned), "is not in the signed manifest")
    # With the manifest rewritten to the new digests: the signature fails.
    manifest = poisoned[MANIFEST].decode()
    for old, new in renamed.items():
        manifest = manifest.replace(old, new)
    rewritten = dict(poisoned, **{MANIFEST: manifest.encode()})
    assert_rejected(rig, write_tar(tmp_path / "p2.tar", rewritten), "does not match what it signs")


def test_a_poisoned_archive_re_signed_by_the_attacker_is_refused(rig, host_export, tmp_path):
    module, honest, members = host_export
    poisoned, _ = poison(members, "host")
    attacker = dict(rig.env, KILN_CACHE_DIR=str(tmp_path / "attacker"),
                    KILN_CONFIG_DIR=str(tmp_path / "attacker-config"))
    rig.run("cache", "import", write_tar(tmp_path / "p.tar", poisoned),
            "--insecure-skip-signature", env=attacker, check=True)
    rig.run("cache", "key", "generate", "--name", "ci", env=attacker, check=True)
    rig.run("cache", "export", tmp_path / "resigned.tar", env=attacker, check=True)
    result = assert_rejected(rig, tmp_path / "resigned.tar", "not among the trusted keys")
    assert "signed by 'ci'" in result.stderr, "the refusal does not name the claimed signer"


def test_skipping_the_signature_imports_the_poisoned_object_at_the_users_risk(
        rig, host_export, tmp_path):
    module, honest, members = host_export
    poisoned, _ = poison(members, "host")
    archive = write_tar(tmp_path / "p.tar", poisoned)
    result = rig.run("cache", "import", archive, "--insecure-skip-signature")
    assert result.returncode == 0, result.stderr
    assert "signature not checked" in result.stdout
    assert "without checking who made it" in result.stderr, result.stderr
    assert rig.verify().returncode == 0, "verify checks integrity, which the forgery keeps"
    built, objects = build_objects(rig, module, tmp_path / "after")
    assert " 0 compiled" in built.stderr, built.stderr
    assert objects != honest, "the poisoned object did not reach the build: the test proves nothing"


def test_the_opt_out_cannot_be_combined_with_trusted_keys(rig, exported, tmp_path):
    archive = write_tar(tmp_path / "a.tar", exported)
    result = rig.run("cache", "import", archive, "--insecure-skip-signature",
                     "--trusted-keys", rig.config / "trusted-keys")
    assert result.returncode == 2, result.stderr
    assert rig.stats()["entries"] == 0


def test_signing_keys_are_never_in_an_archive(rig, exported):
    key = (rig.config / "keys" / "ci.key").read_bytes()
    assert all(b"PRIVATE KEY" not in data for data in exported.values())
    assert all(key not in data for data in exported.values())


def test_keys_go_to_the_configuration_folder_kiln_config_dir_names(rig):
    rig.make_key("ci")
    assert sorted(p.name for p in rig.config.iterdir()) == ["keys", "trusted-keys"]
    assert [p.name for p in (rig.config / "keys").iterdir()] == ["ci.key"]


def test_without_kiln_config_dir_keys_go_under_xdg_config_home(rig, tmp_path):
    env = {k: v for k, v in rig.env.items() if k != "KILN_CONFIG_DIR"}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    result = rig.run("cache", "key", "generate", "--name", "ci", env=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "xdg" / "kiln" / "keys" / "ci.key").exists(), result.stdout
