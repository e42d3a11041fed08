#!/usr/bin/env python3
"""Appends the tests of one Steer store to another recorded on the same device, input and spec.

    python3 scripts/gpu/append_store.py TARGET.db SOURCE.db

For the parts of a space two GPUs recorded side by side (scripts/gpu/split_remaining,
take_results): each test of SOURCE whose configuration TARGET lacks is appended, in SOURCE's
order, after TARGET's last, with its counters. A configuration both hold keeps TARGET's test:
measurements already taken are never replaced. Stores of different tunings (spec, device,
backend or size) are refused, and nothing is written. Prints TARGET's tests before and after
and how many were appended: "200 -> 210 tests (10 tests appended)"."""
import sqlite3
import sys

TUNING = ("spec_name", "spec_hash", "device", "backend", "problem_size")


def tuning_of(con, schema):
    rows = con.execute(f"select id, {', '.join(TUNING)} from {schema}.tunings").fetchall()
    if len(rows) != 1:
        raise SystemExit(f"append_store: {schema} store holds {len(rows)} tunings, not one")
    return rows[0][0], rows[0][1:]


def main(target, source):
    con = sqlite3.connect(target)
    con.execute("attach database ? as source", (source,))
    target_id, target_tuning = tuning_of(con, "main")
    source_id, source_tuning = tuning_of(con, "source")
    if target_tuning != source_tuning:
        raise SystemExit(f"append_store: {target} and {source} hold different tunings: "
                         f"{target_tuning} against {source_tuning}")
    columns = [row[1] for row in con.execute("pragma main.table_info(tests)")]
    missing = set(columns) - {row[1] for row in con.execute("pragma source.table_info(tests)")}
    if missing:
        raise SystemExit(f"append_store: {source}'s tests lack the columns {sorted(missing)}")
    copied = [c for c in columns if c not in ("id", "tuning_id", "sequence")]
    has_counters = all(con.execute(f"select 1 from {s}.sqlite_master where name = 'counters'").fetchone()
                       for s in ("main", "source"))
    before = con.execute("select count(*) from tests where tuning_id = ?", (target_id,)).fetchone()[0]
    with con:
        next_sequence = con.execute("select coalesce(max(sequence), -1) + 1 from tests where tuning_id = ?",
                                    (target_id,)).fetchone()[0]
        rows = con.execute(
            f"select id, {', '.join(copied)} from source.tests s where tuning_id = ? and not exists "
            "(select 1 from main.tests t where t.tuning_id = ? and t.config_key = s.config_key) order by sequence",
            (source_id, target_id)).fetchall()
        for offset, (source_test, *values) in enumerate(rows):
            cursor = con.execute(
                f"insert into tests (tuning_id, sequence, {', '.join(copied)}) values (?, ?, {', '.join('?' * len(copied))})",
                (target_id, next_sequence + offset, *values))
            if has_counters:
                con.execute("insert into counters (test_id, name, value) select ?, name, value "
                            "from source.counters where test_id = ?", (cursor.lastrowid, source_test))
    kept = con.execute("select count(*) from source.tests where tuning_id = ?", (source_id,)).fetchone()[0] - len(rows)
    already = f"; {kept} of the source's configurations were there already" if kept else ""
    print(f"{before} -> {before + len(rows)} tests ({len(rows)} tests appended{already})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: append_store.py TARGET.db SOURCE.db (uncompressed Steer stores)")
    main(sys.argv[1], sys.argv[2])
