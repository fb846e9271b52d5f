import subprocess
import sys


def run(*a):
    return subprocess.run([sys.executable, 'greet.py', *a], capture_output=True, text=True, check=True).stdout.strip()
assert run('Bob') == 'Hello, Bob!'
assert run('Bob', '--shout') == 'HELLO, BOB!'
