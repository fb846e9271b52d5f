from utils import fetch_data

print(sum(fetch_data()))
