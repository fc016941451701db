"""`python -m strata ARGS...` is `strata ARGS...`: the command run by the
package's library (strata._lib.run_command), its output printed and its
exit code returned, for a machine where the package is installed but the
`strata` program is not on PATH."""
import sys

from strata._lib import run_command


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        rc, out, err = run_command(args)
    except KeyboardInterrupt:
        return 130
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    return rc


if __name__ == "__main__":
    sys.exit(main())
