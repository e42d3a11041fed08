#!/usr/bin/env python3
"""Appends the tests of one Steer store to another recorded on the same device, input and spec.

    python3 scripts/gpu/append_store.py TARGET.db SOURCE.db

For the parts of a space two GPUs recorded side by side (scripts/gpu/split_remaining,
take_results): each test of SOURCE whose configuration TARGET lacks is appended, in SOURCE's
order, after TARGET's last, with its counters. A configuration both hold keeps TARGET's test:
measurements already taken are never replaced. Stores of different tunings (spec, device,
backend or size) are refused, and so is a SOURCE whose counters were measured with another
profiler range than TARGET's (record.sh keeps each store's range in its table steer_recording;
a store's counters must all come from one range); nothing is written then. Prints TARGET's tests before and after
and how many were appended: "200 -> 210 tests (10 tests appended)"."""
import sqlite3
import sys

TUNING = ("spec_name", "spec_hash", "device", "backend", "problem_size")


def tuning_of(con, schema):
    rows = con.execute(f"select id, {', '.join(TUNING)} from {schema}.tunings").fetchall()
    if len(rows) != 1:
        raise SystemExit(f"append_store: {schema} store holds {len(rows)} tunings, not one")
    return rows[0][0], rows[0][1:]


def has_counters(con, schema, tuning_id):
    if con.execute(f"select 1 from {schema}.sqlite_master where name = 'counters'").fetchone() is None:
        return False
    return con.execute(f"select exists (select 1 from {schema}.counters c join {schema}.tests t on t.id = c.test_id "
                       "where t.tuning_id = ?)", (tuning_id,)).fetchone()[0] == 1


def profiler_range(con, schema, tuning_id):
    """The range the store's counters were measured with, as record.sh reads it: the store's own
    record; "user" for a store with counters and no record (recorded before stores said); None
    for one with neither, which any range fits."""
    if con.execute(f"select 1 from {schema}.sqlite_master where name = 'steer_recording'").fetchone():
        row = con.execute(f"select value from {schema}.steer_recording where key = 'profiler_range'").fetchone()
        if row:
            return row[0]
    return "user" if has_counters(con, schema, tuning_id) else None


def main(target, source):
    con = sqlite3.connect(target)
    con.execute("attach database ? as source", (source,))
    target_id, target_tuning = tuning_of(con, "main")
    source_id, source_tuning = tuning_of(con, "source")
    if target_tuning != source_tuning:
        raise SystemExit(f"append_store: {target} and {source} hold different tunings: "
                         f"{target_tuning} against {source_tuning}")
    target_range = profiler_range(con, "main", target_id)
    source_range = profiler_range(con, "source", source_id) if has_counters(con, "source", source_id) else None
    if source_range and target_range and source_range != target_range:
        raise SystemExit(f"append_store: {source}'s counters were measured with the {source_range} profiler range, "
                         f"{target}'s with the {target_range} range; one store must not mix them")
    columns = [row[1] for row in con.execute("pragma main.table_info(tests)")]
    missing = set(columns) - {row[1] for row in con.execute("pragma source.table_info(tests)")}
    if missing:
        raise SystemExit(f"append_store: {source}'s tests lack the columns {sorted(missing)}")
    copied = [c for c in columns if c not in ("id", "tuning_id", "sequence")]
    copy_counters = all(con.execute(f"select 1 from {s}.sqlite_master where name = 'counters'").fetchone()
                        for s in ("main", "source"))
    before = con.execute("select count(*) from tests where tuning_id = ?", (target_id,)).fetchone()[0]
    with con:
        if source_range and target_range is None:  # the target's first counters: it takes their range
            con.execute("create table if not exists steer_recording (key text primary key, value text not null)")
            con.execute("insert or replace into steer_recording values ('profiler_range', ?)", (source_range,))
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
            if copy_counters:
                con.execute("insert into counters (test_id, name, value) select ?, name, value "
                            "from source.counters where test_id = ?", (cursor.lastrowid, source_test))
    kept = con.execute("select count(*) from source.tests where tuning_id = ?", (source_id,)).fetchone()[0] - len(rows)
    already = f"; {kept} of the source's configurations were there already" if kept else ""
    print(f"{before} -> {before + len(rows)} tests ({len(rows)} tests appended{already})")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: append_store.py TARGET.db SOURCE.db (uncompressed Steer stores)")
    main(sys.argv[1], sys.argv[2])
