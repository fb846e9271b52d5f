def fetch_data():
    return [1, 2, 3]
