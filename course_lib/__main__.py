"""Command line: ``python -m course_lib bench [--size N] [--dtype f32] [--kernel tile]``."""
import sys


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m course_lib bench [options]   (python -m course_lib bench --help)")
        return 0
    if argv[0] == "bench":
        from .bench import main as bench
        return bench(argv[1:])
    print(f"unknown command {argv[0]!r}; try: python -m course_lib bench --help", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
