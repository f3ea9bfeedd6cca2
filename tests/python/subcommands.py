"""The subcommands a built attnlab lists in --help, in its order: the registry's own list, read
by the scripts that loop over every experiment instead of keeping one."""
import subprocess


def subcommands(attnlab):
    text = subprocess.run([attnlab, "--help"], capture_output=True, text=True, check=True).stdout
    names = [line.split()[0] for line in text.split("Subcommands:\n")[1].split("\n\n")[0].splitlines() if line.strip()]
    assert "tour" in names and "exercise" in names and len(names) >= 12, names
    return names
