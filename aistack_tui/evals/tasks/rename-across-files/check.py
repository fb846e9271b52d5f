import pathlib
import subprocess
import sys

import report
import utils

assert utils.load_data() == [1, 2, 3]
assert not hasattr(utils, 'fetch_data')
assert report.report() == 3
for p in pathlib.Path('.').glob('*.py'):
    assert 'fetch_data' not in p.read_text(), p
out = subprocess.run([sys.executable, 'main.py'], capture_output=True, text=True)
assert out.stdout.strip() == '6', out
