import json

data = json.load(open('config.json'))
assert data == {'name': 'service', 'retries': 3, 'timeout': 30}, data
