-- migrate_4.sql - schema version 3 to 4: every job's leaders round times a second ceiling
-- beside the device copy, the interior copy (kernels_src/copy.hip, docs/measurement.md):
-- u's interior copied to f's, paying for the same partly written row ends as a stencil.
-- The best row keeps its figure, as it keeps copy_gbps, so that query answers and exports
-- carry both ceilings of the round that chose the winner. The Makefile embeds this file as
-- fdt_migrate_4_sql; db/store.c runs it in the migration's transaction.

-- GB/s of the fastest interior copy shape, counting the interior read and written. 0 where
-- none was timed: rows stored before this version, or a round in which no shape ran. Not
-- NULL, which the store reads as NaN: JSON has no NaN, so an old row could not be answered
-- or exported with the column.
ALTER TABLE best ADD COLUMN interior_copy_gbps REAL NOT NULL DEFAULT 0;
