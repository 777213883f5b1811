-- A fleet's tables over a cluster (docs/fleet.md, "A cluster"): run schema.sql on every
-- shard first (each keeps its share in iotracer.requests and iotracer.requests_blame),
-- then this on the node(s) the daemons and `iotracer report` talk to. The cluster is
-- "iotracer" in the servers' remote_servers (deploy/clickhouse/cluster.xml).
--
-- Daemons ship to clickhouse://NODE:8123/iotracer.fleet, its blame lines go to
-- iotracer.fleet_blame (the table's name + "_blame"); reports read the same two. A row
-- goes to the shard of its key (host, boot, run, id): a request sent twice lands twice on
-- the same shard, in the same partition, where ReplacingMergeTree keeps one; and its
-- blame line lands beside it.

CREATE TABLE IF NOT EXISTS iotracer.fleet AS iotracer.requests
ENGINE = Distributed(iotracer, iotracer, requests, sipHash64(host, boot, run, id));

CREATE TABLE IF NOT EXISTS iotracer.fleet_blame AS iotracer.requests_blame
ENGINE = Distributed(iotracer, iotracer, requests_blame, sipHash64(host, boot, run, id));
