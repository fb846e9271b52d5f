import subprocess
import sys

out = subprocess.run([sys.executable, 'app.py'], capture_output=True, text=True)
assert out.returncode == 0 and out.stdout.strip() == '4', out
import pathlib

assert pathlib.Path('helpers.py').exists()
