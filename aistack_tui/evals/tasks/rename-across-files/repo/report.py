import utils


def report():
    return len(utils.fetch_data())
