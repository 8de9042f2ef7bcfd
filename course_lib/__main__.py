"""Command line::

    python -m course_lib bench [--size N] [--dtype f32] [--kernel tile]
    python -m course_lib run KERNEL [--dtype f32] [--shape RxC]          (one launch, for ncu)
    python -m course_lib lab [NOTEBOOKS] [--no-browser] [--port N]      (the same as course-lab)
    python -m course_lib instructor build --out DIR | refresh [NB...] | check [NB...]
    python -m course_lib capability [--write]                           (which GPU runs which notebook)
    python -m course_lib keep-both --install [--system]                 (the hub's pull keeps both sides)
"""
import sys

COMMANDS = {"bench": ".transposes.bench", "run": ".transposes.run_once", "lab": ".lab.student.course_lab",
            "instructor": ".lab.instructor.cli", "capability": ".lessons.capability", "keep-both": ".lab.student.keepboth"}
USAGE = ("usage: python -m course_lib {bench,run,lab,instructor,capability,keep-both} [options]   "
         "(python -m course_lib COMMAND --help)")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if argv[0] in COMMANDS:
        import importlib
        return importlib.import_module(COMMANDS[argv[0]], __package__).main(argv[1:])
    print(f"unknown command {argv[0]!r}; {USAGE}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
