"""`kiln completion bash|zsh|fish`: scripts written from the command-line
definition the parser uses. The bash script is run here as bash runs it on
<TAB>; zsh and fish are not installed here, so their scripts are checked
for what they say."""

import shlex
import subprocess

import pytest


def script(kiln, shell):
    result = kiln("completion", shell)
    assert result.returncode == 0, result.stderr
    return result.stdout


def complete(bash_script, words, cwd):
    """What bash offers for the command line `words`, the last one being
    completed."""
    program = (bash_script + "\nCOMP_WORDS=(" + " ".join(shlex.quote(w) for w in words) + ")\n"
               f"COMP_CWORD={len(words) - 1}\n_kiln\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n")
    result = subprocess.run(["bash", "-c", program], capture_output=True, text=True, cwd=cwd, timeout=60)
    assert result.returncode == 0, result.stderr
    return sorted(line for line in result.stdout.splitlines() if line)


@pytest.mark.parametrize("words, offered", [
    (["kiln", "bu"], ["build"]),
    (["kiln", "c"], ["cache", "check", "completion"]),
    (["kiln", "--col"], ["--color"]),
    (["kiln", "build", "--em"], ["--emit"]),
    (["kiln", "--color=never", "build", "--no-"],
     ["--no-cache", "--no-fastmath", "--no-lineinfo", "--no-remote-cache",
      "--no-switchable-index-checks"]),
    (["kiln", "cache", "pr"], ["prune"]),
    (["kiln", "cache", "prune", "--o"], ["--older-than"]),
    (["kiln", "cache", "key", "g"], ["generate"]),
    (["kiln", "build", "ker"], ["kernels.py"]),
    (["kiln", "targets", "ker"], []),
])
def test_bash_offers_the_commands_options_and_files_that_fit(kiln, tmp_path, words, offered):
    (tmp_path / "kernels.py").write_text("")
    assert complete(script(kiln, "bash"), words, tmp_path) == offered


def test_every_command_is_in_each_script(kiln):
    help_text = kiln("--help").stdout
    commands = ["check", "build", "inspect", "audit", "targets", "cache", "signatures", "completion"]
    for command in commands:
        assert f"  {command} " in help_text
    bash, zsh, fish = (script(kiln, shell) for shell in ("bash", "zsh", "fish"))
    assert zsh.splitlines()[2] == "autoload -U +X bashcompinit && bashcompinit"
    assert bash in zsh, "zsh runs the bash completion"
    for command in commands:
        assert f"/{command} " in bash or f"/{command})" in bash
        assert f"complete -c kiln -n '__fish_use_subcommand' -a {command} -d " in fish
    assert "complete -c kiln -n '__fish_seen_subcommand_from build' -l emit -r -d 'What to write" in fish
    assert "complete -c kiln -n '__fish_seen_subcommand_from build' -l fastmath -d " in fish
    assert ("complete -c kiln -n '__fish_seen_subcommand_from cache; and "
            "__fish_seen_subcommand_from prune' -l older-than -r -d ") in fish


def test_an_unknown_shell_is_a_usage_error(kiln):
    result = kiln("completion", "tcsh")
    assert result.returncode == 2
    assert result.stderr.startswith("kiln: error: shell: tcsh not in {bash,zsh,fish}"), result.stderr
