import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('name')
    args = parser.parse_args()
    message = f'Hello, {args.name}!'
    print(message)


if __name__ == '__main__':
    main()
