"""``argnb exercises release | grade | lms | report`` (also ``python -m argnb.exercises ...``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from argnb.errors import ArgnbError


def _exercise_root(arg: Path | None) -> Path:
    """``--root`` or ``./exercises`` or the course shipped with the package."""
    if arg is not None:
        return arg
    if Path("exercises").is_dir():
        return Path("exercises")
    from argnb.course import course_root

    return course_root() / "exercises"


def cmd_release(args: argparse.Namespace) -> int:
    from argnb.exercises.release import release

    root = args.root or Path("exercises")
    if not root.is_dir():
        raise ArgnbError(
            f"no exercises folder at {root}", hint="run it in the project, or pass --root"
        )
    changed = release(root, check=args.check, to=None if args.check else args.to)
    for path in changed:
        print(("stale: " if args.check else "wrote: ") + str(path))
    if args.check:
        return 1 if changed else 0
    print(f"student versions are up to date; zips in {args.to}")
    return 0


def progress_line(o: Any) -> str:
    """One line per graded notebook (the student's name is already escaped to one line)."""
    from argnb.terminal import inert

    got = sum(r.points for r in o.rows)
    best = sum(r.max_points for r in o.rows)
    extra = "" if o.status == "ok" else f"  ({o.status})"
    line = f"  {o.student:<16} {o.notebook:<32} {got:g}/{best:g} in {o.seconds:.1f} s{extra}"
    return inert(line).replace("\n", "\\n").replace("\r", "\\r")


def cmd_grade(args: argparse.Namespace) -> int:
    from argnb.exercises import grade as g
    from argnb.exercises.sandbox import DESCRIPTION, Limits

    exercise = _exercise_root(args.root) / args.exercise
    if not (exercise / "solutions").is_dir():
        from argnb.course import PACKAGED

        shipped = PACKAGED in exercise.resolve().parents
        raise ArgnbError(
            f"no exercise {args.exercise!r} with solutions under {exercise.parent}"
            + (": the installed package holds the student versions only" if shipped else ""),
            hint="grading needs the solutions, which are in the repository's exercises/ folder: "
            "run it in a clone, or pass --root path/to/clone/exercises",
        )

    def progress(o: g.Outcome) -> None:
        print(progress_line(o))

    from argnb.cli_common import output_path, print_json
    from argnb.terminal import inert

    out = output_path(args.out or "grades.csv")
    _check_lms_args(args)  # before anything is graded
    g.require_sandbox(args.sandbox, args.i_understand)  # before anything is printed
    print(
        f"grading {args.exercise} from {args.submissions} (limit {args.timeout:g} s per notebook)"
    )
    limits = Limits(
        memory_mb=args.memory_mb,
        processes=args.processes,
        file_mb=args.file_mb,
        cpu_seconds=args.cpu_seconds or max(60, int(args.timeout * 2)),
        total_memory_mb=args.total_memory_mb,
    )
    grades = g.grade(
        args.submissions,
        exercise,
        timeout=args.timeout,
        jobs=args.jobs,
        level=args.sandbox,
        trusted=args.i_understand,
        limits=limits,
        progress=None if args.quiet else progress,
    )
    feedback = g.write(grades, out, args.feedback)
    if args.canvas or args.moodle:
        from argnb.exercises import lms

        book = {args.assignment or args.exercise: lms.from_grades(grades)}
        grades.warnings += _write_lms(args, book)
    for w in grades.warnings:
        print("warning:", inert(w).replace("\n", "\\n"), file=sys.stderr)
    print()
    print(grades.summary().to_string())
    print()
    print(
        f"graded {len(grades.outcomes)} notebooks of {grades.summary().shape[0]} students "
        f"in {grades.seconds:.1f} s wall time; sandbox: {DESCRIPTION[grades.sandbox]}"
    )
    print(f"grades: {out}   feedback pages: {feedback}/")
    for flag, path in (("Canvas", args.canvas), ("Moodle", args.moodle)):
        if path:
            print(f"{flag} gradebook import: {path}")
    if args.json:
        totals = grades.frame().groupby("student")[["points", "max_points"]].sum()
        print_json(
            {
                "exercise": args.exercise,
                "notebooks": len(grades.outcomes),
                "seconds": round(grades.seconds, 1),
                "sandbox": grades.sandbox,
                "points": totals["points"].to_dict(),
                "max_points": totals["max_points"].to_dict(),
                "grades": str(out),
            }
        )
    return 0


def _check_lms_args(args: argparse.Namespace) -> None:
    from argnb.cli_common import output_path
    from argnb.exercises import lms

    for flag in ("canvas", "moodle"):
        output_path(getattr(args, flag), f"--{flag}", suffixes=(".csv",))
    if args.roster:
        lms.read_roster(args.roster)


def _write_lms(args: argparse.Namespace, book: dict) -> list[str]:
    from argnb.exercises import lms

    roster = lms.read_roster(args.roster) if args.roster else None
    return lms.write(
        book, roster, canvas_to=args.canvas, moodle_to=args.moodle, moodle_key=args.moodle_user
    )


def cmd_lms(args: argparse.Namespace) -> int:
    """Several exercises' grades CSVs into one gradebook import (a column each)."""
    from argnb.exercises import lms

    if not (args.canvas or args.moodle):
        raise ArgnbError("nothing to write", hint="pass --canvas FILE, --moodle FILE or both")
    _check_lms_args(args)
    book: dict = {}
    for spec in args.grades:
        name, sep, path = spec.partition("=")
        file = Path(path if sep else spec)
        assignment = name if sep else file.stem
        if assignment in book:
            raise ArgnbError(
                f"two grades files for the assignment {assignment!r}",
                hint="name each column: NAME=grades.csv",
            )
        book[assignment] = lms.read_grades(file)
    for w in _write_lms(args, book):
        print("warning:", w, file=sys.stderr)
    for flag, path in (("Canvas", args.canvas), ("Moodle", args.moodle)):
        if path:
            print(f"{flag} gradebook import: {path} ({', '.join(book)})")
    return 0


def _lms_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--canvas", type=Path, default=None, help="write Canvas's gradebook import CSV")
    p.add_argument("--moodle", type=Path, default=None, help="write Moodle's grade import CSV")
    p.add_argument(
        "--roster",
        type=Path,
        default=None,
        help="CSV: hub_name and any of name,id,sis_user_id,sis_login_id,section,username,email",
    )
    p.add_argument(
        "--moodle-user",
        choices=["username", "email"],
        default="username",
        help="how Moodle finds a learner (username)",
    )


def cmd_report(args: argparse.Namespace) -> int:
    from argnb.cli_common import output_path
    from argnb.exercises.report import write_report

    out = output_path(args.out)
    report = write_report(args.folder, args.kind, out)
    for w in report.warnings:
        print("warning:", w, file=sys.stderr)
    print(f"wrote {out}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """The three sub-commands, on any sub-parser collection."""
    from argnb.cli_common import add_run_args, positive_float, positive_int

    p = sub.add_parser("release", help="write student notebooks and one zip per exercise")
    p.add_argument("--root", type=Path, default=None, help="exercises folder (default ./exercises)")
    p.add_argument(
        "--to", type=Path, default=Path("dist/exercises"), help="where the zips go (dist/exercises)"
    )
    p.add_argument("--check", action="store_true", help="only report stale student versions")
    p.set_defaults(func=cmd_release)

    p = sub.add_parser("grade", help="run and grade submitted notebooks, hidden tests included")
    p.add_argument("submissions", type=Path, help="one folder per student, or NAME__file.ipynb")
    p.add_argument("--exercise", required=True, help="exercise folder name, e.g. 01_fallacy")
    p.add_argument("--root", type=Path, default=None, help="exercises folder (default ./exercises)")
    p.add_argument(
        "--timeout", type=positive_float, default=120.0, help="seconds per notebook (120)"
    )
    p.add_argument("--feedback", type=Path, default=None, help="folder for feedback pages")
    p.add_argument("--jobs", type=positive_int, default=1, help="notebooks graded at once (1)")
    p.add_argument(
        "--sandbox",
        choices=["bwrap", "none"],
        default="bwrap",
        help="bwrap (default; refuses to grade without bubblewrap) or none (trusted code only)",
    )
    p.add_argument(
        "--i-understand",
        action="store_true",
        help="with --sandbox none: run the submissions unconfined, with your permissions",
    )
    p.add_argument("--memory-mb", type=positive_int, default=2048, help="address space (2048)")
    p.add_argument(
        "--total-memory-mb",
        type=positive_int,
        default=3072,
        help="memory of each submission's whole sandbox (3072)",
    )
    p.add_argument("--processes", type=positive_int, default=256, help="processes+threads (256)")
    p.add_argument("--file-mb", type=positive_int, default=256, help="largest file written (256)")
    p.add_argument(
        "--cpu-seconds",
        type=positive_int,
        default=None,
        help="CPU time per process (default: twice --timeout, at least 60)",
    )
    add_run_args(p, out="grades CSV (default grades.csv; feedback pages beside it)")
    _lms_args(p)
    p.add_argument(
        "--assignment", default=None, help="the LMS's name for it (default: the exercise's)"
    )
    p.set_defaults(func=cmd_grade)

    p = sub.add_parser("lms", help="grades CSVs into Canvas's or Moodle's gradebook import")
    p.add_argument("grades", nargs="+", help="grades.csv files, or NAME=grades.csv (NAME: column)")
    _lms_args(p)
    p.set_defaults(func=cmd_lms)

    p = sub.add_parser("report", help="one HTML report of a class's ratings or feedback forms")
    p.add_argument("folder", type=Path, help="a folder of CSV files (or one CSV)")
    p.add_argument("--kind", choices=["ratings", "feedback"], required=True)
    p.add_argument(
        "--out", type=Path, default=Path("report.html"), help="report file (report.html)"
    )
    p.set_defaults(func=cmd_report)


def register(sub: argparse._SubParsersAction) -> None:
    """``argnb exercises ...`` (see :mod:`argnb.cli`)."""
    p = sub.add_parser("exercises", help="release, grade and report on exercises")
    add_commands(p.add_subparsers(dest="exercises_command", required=True))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m argnb.exercises ...`` is ``argnb exercises ...``."""
    from argnb.cli import main as argnb_main

    return argnb_main(["exercises", *(sys.argv[1:] if argv is None else argv)])
