"""Who may put entries into a build through a remote: uploads are signed with
the machine's signing key, and a remote entry is used only when a key the
machine trusts signed it (unless the URL says `insecure-skip-signature`).
And who may talk to the server: passwords and tokens, right or wrong, from
the URL or the environment, never shown."""

import pytest

from .conftest import (assert_every_lookup, assert_like_without_remote, assert_no_remote_warning,
                       assert_one_warning, displayed)

PASSWORD = "right-pass-4207"
WRONG = "wrong-pass-9184"
TOKEN = "right-token-5521"
WRONG_TOKEN = "wrong-token-3318"
SECRETS = (PASSWORD, WRONG, TOKEN, WRONG_TOKEN)


def using(url, *attributes):
    return ["--remote-cache", "|".join([url, *attributes])]


# Signatures.


def test_unsigned_entries_are_rejected(remote, machine, reference, lookups):
    unsigned = machine("unsigned", key=False)
    unsigned.kiln_build(*using(remote.url, "insecure-skip-signature"))
    assert remote.objects(), (
        "a machine without a key stored nothing despite insecure-skip-signature")
    build = machine("b").kiln_build(*using(remote.url))
    assert_every_lookup(build, "compiled", lookups)
    assert_like_without_remote(build, reference)
    assert_one_warning(build, remote.url, "rejected")


def test_entries_signed_by_a_key_not_trusted_are_rejected(remote, machine, reference, lookups):
    a, b, c = machine("a"), machine("b"), machine("c")
    b.trust(c)  # trusts some key, not A's
    a.kiln_build(*using(remote.url))
    build = b.kiln_build(*using(remote.url))
    assert_every_lookup(build, "compiled", lookups)
    assert_like_without_remote(build, reference)
    assert_one_warning(build, remote.url, "rejected")


def test_insecure_skip_signature_uses_unsigned_entries(remote, machine, reference, warm_lookups):
    machine("unsigned", key=False).kiln_build(*using(remote.url, "insecure-skip-signature"))
    build = machine("b").kiln_build(*using(remote.url, "insecure-skip-signature"))
    assert_every_lookup(build, "remote hit", warm_lookups)
    assert_like_without_remote(build, reference)


def test_a_machine_without_a_signing_key_uploads_nothing(remote, machine, reference):
    # Without -v: only notes and warnings mention the remote.
    build = machine("a", key=False).kiln_build(*using(remote.url), verbose=False)
    assert remote.objects() == [], "a machine without a signing key uploaded"
    assert_like_without_remote(build, reference)
    notes = [line for line in build.stderr.splitlines()
             if "remote cache" in line or displayed(remote.url) in line]
    assert len(notes) == 1, f"expected one note that nothing is uploaded, got:\n{build.stderr}"


def test_keys_named_by_the_environment_sign_and_verify(remote, machine, tmp_path, warm_lookups):
    a, b = machine("a", key=False), machine("b", key=False)
    key = tmp_path / "secret" / "ci.key"
    made = a.run("cache", "key", "generate", "--name", "ci", "--file", key, check=True)
    trusted = tmp_path / "trusted-keys"
    trusted.write_text(made.stdout.strip().splitlines()[-1] + "\n")
    a.env["KILN_SIGNING_KEY"] = str(key)
    b.env["KILN_TRUSTED_KEYS"] = str(trusted)
    a.kiln_build(*using(remote.url))
    assert remote.objects(), "KILN_SIGNING_KEY did not let the machine upload"
    assert_every_lookup(b.kiln_build(*using(remote.url)), "remote hit", warm_lookups)


# Credentials.


def credentials(server_kind, redis_server, webdav_server, password_in):
    """A server that wants PASSWORD, and (URL with the right password, URL
    with a wrong one, env) as `password_in` ("url" or "env") passes them."""
    if server_kind == "redis":
        server = redis_server(password=PASSWORD)
    else:
        server = webdav_server(basic_auth=("kiln", PASSWORD))
    user = "default" if server_kind == "redis" else "kiln"
    if password_in == "url":
        return (server, server.url_with_password(PASSWORD, user),
                server.url_with_password(WRONG, user), {})
    bare = server.url.replace("://", f"://{user}@", 1)
    return (server, f"{bare}|password-env=KILN_TEST_REMOTE_PASSWORD",
            f"{bare}|password-env=KILN_TEST_REMOTE_WRONG", {
                "KILN_TEST_REMOTE_PASSWORD": PASSWORD, "KILN_TEST_REMOTE_WRONG": WRONG})


@pytest.mark.parametrize("password_in", ["url", "env"])
def test_the_right_password_opens_the_server_and_is_never_shown(
        server_kind, redis_server, webdav_server, machine, password_in, warm_lookups):
    server, right, _, variables = credentials(server_kind, redis_server, webdav_server, password_in)
    a, b = machine("a"), machine("b")
    b.trust(a)
    for each in (a, b):
        each.env.update(variables)
    first = a.kiln_build("--remote-cache", right)
    assert server.objects(), f"nothing stored through {displayed(right)}"
    second = b.kiln_build("--remote-cache", right)
    assert_every_lookup(second, "remote hit", warm_lookups)
    for build in (first, second):
        assert_no_remote_warning(build)
        assert PASSWORD not in build.stderr + build.stdout, "the output shows the password"


@pytest.mark.parametrize("password_in", ["url", "env", "none"])
def test_a_wrong_or_missing_password_fails_no_build_and_is_never_shown(
        server_kind, redis_server, webdav_server, machine, reference, password_in):
    server, _, wrong, variables = credentials(
        server_kind, redis_server, webdav_server, "env" if password_in == "none" else password_in)
    if password_in == "none":
        wrong = server.url
    a = machine("a")
    a.env.update(variables)
    build = a.kiln_build("--remote-cache", wrong)
    assert server.objects() == [], "a refused client stored objects"
    assert_like_without_remote(build, reference)
    assert_one_warning(build, wrong, secrets=SECRETS)
    if password_in == "url":
        assert "***" in build.remote_warnings()[0], "the URL's password is not shown as ***"


def test_the_right_bearer_token_opens_the_server_and_is_never_shown(
        webdav_server, machine, warm_lookups):
    server = webdav_server(bearer_token=TOKEN)
    a, b = machine("a"), machine("b")
    b.trust(a)
    for each in (a, b):
        each.env["KILN_TEST_REMOTE_TOKEN"] = TOKEN
    url = f"{server.url}|bearer-token-env=KILN_TEST_REMOTE_TOKEN"
    first = a.kiln_build("--remote-cache", url)
    assert server.objects(), "nothing stored with the right bearer token"
    second = b.kiln_build("--remote-cache", url)
    assert_every_lookup(second, "remote hit", warm_lookups)
    for build in (first, second):
        assert_no_remote_warning(build)
        assert TOKEN not in build.stderr + build.stdout, "the output shows the token"


@pytest.mark.parametrize("token", [WRONG_TOKEN, None], ids=["wrong token", "no token"])
def test_a_wrong_or_missing_bearer_token_fails_no_build_and_is_never_shown(
        webdav_server, machine, reference, token):
    server = webdav_server(bearer_token=TOKEN)
    a = machine("a")
    url = server.url
    if token is not None:
        a.env["KILN_TEST_REMOTE_TOKEN"] = token
        url += "|bearer-token-env=KILN_TEST_REMOTE_TOKEN"
    build = a.kiln_build("--remote-cache", url)
    assert server.objects() == [], "a refused client stored objects"
    assert_like_without_remote(build, reference)
    assert_one_warning(build, server.url, secrets=SECRETS)
