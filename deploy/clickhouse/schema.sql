-- iotracer's tables in ClickHouse (docs/fleet.md, "Schema"): what `iotracer --sink
-- clickhouse://HOST:PORT/iotracer.requests` fills, one row per request (the fields of its
-- -j line, docs/json.md; its block requests in the Nested block.*), and one row per
-- request's blame line in requests_blame (--blame; the table's name + "_blame").
--
-- Runs on Debian's clickhouse-server 18.16 and on current releases: timestamps are
-- UInt64 ns (18.16 has no DateTime64), no LowCardinality, codecs or TTL. A row's key is
-- (host, boot, run, id): a batch sent twice (at-least-once delivery) leaves doubles that
-- ReplacingMergeTree removes when it merges; until then, query with FINAL (or count
-- distinct keys). ts is the request's start, CLOCK_REALTIME ns; the other times are
-- durations (ns) from it, or CLOCK_MONOTONIC stamps (ts_mono = ts - clock_off).
--
--   clickhouse-client --multiquery < deploy/clickhouse/schema.sql
--
-- The sink checks the columns at start (DESCRIBE TABLE): a table of another build's
-- schema is refused with the first column that differs. A cluster: run this on every
-- shard, then distributed.sql on the node(s) the daemons and reports talk to.

CREATE DATABASE IF NOT EXISTS iotracer;

-- One row per request. flags: the record's IT_F_* bits and SK_F_* (docs/fleet.md).
CREATE TABLE IF NOT EXISTS iotracer.requests
(
    host String,
    boot String,
    run UInt64,
    id UInt64,
    ts UInt64,
    clock_off Int64,
    kind String,
    syscall String,
    op String,
    dev String,
    devno String,
    ino UInt64,
    file String,
    container_file String,
    offset UInt64,
    bytes UInt64,
    ret Int64,
    lat_ns UInt64,
    flags UInt32,
    pid UInt32,
    tid UInt32,
    comm String,
    cgroup_id UInt64,
    cgroup String,
    runtime String,
    container_id String,
    container String,
    containerd_namespace String,
    pod_uid String,
    pod String,
    namespace String,
    qos String,
    cache_miss_pages UInt32,
    vfs_ns UInt64,
    pre_block_ns UInt64,
    post_block_ns UInt64,
    switches UInt32,
    preempted UInt32,
    runq_ns UInt64,
    offcpu_ns UInt64,
    offcpu_blocked_ns UInt64,
    waker_tid UInt32,
    waker_comm String,
    nr_bios UInt32,
    uring_user_data UInt64,
    uring_opcode UInt8,
    aio_iocb UInt64,
    parent_id UInt64,
    parent_tid UInt32,
    parent_seq UInt64,
    block_apart UInt32,
    waited_n UInt32,
    waited_bytes UInt64,
    waited_ids Array(UInt64),
    block Nested(
        dev String,
        devno String,
        op String,
        sector UInt64,
        bytes UInt32,
        ino UInt64,
        file String,
        container_file String,
        file_devno String,
        q_off_ns Int64,
        q2g_ns UInt64,
        i2d_ns UInt64,
        q2d_ns UInt64,
        d2c_ns UInt64,
        q2c_ns UInt64,
        flags UInt32,
        merged UInt16,
        error Int32,
        origin String,
        pid UInt32,
        tid UInt32,
        blkcg_id UInt64,
        blkcg String,
        dirty_pid UInt32,
        dirty_tid UInt32,
        dirty_comm String,
        dirty_cgroup_id UInt64,
        dirty_cgroup String,
        dirty_bytes UInt32,
        other_pid UInt32,
        other_bytes UInt32,
        unknown_bytes UInt32,
        unknown_why UInt8,
        dirty_first_ns UInt64,
        dirty_last_ns UInt64,
        dirty_file_devno String,
        drv_layer String,
        drv_submit_ns UInt64,
        drv_kick_ns UInt64,
        drv_done_ns UInt64,
        drv_qid UInt16,
        drv_tag UInt32,
        drv_opcode UInt8,
        drv_status Int32,
        serial String,
        upper String,
        upper_devno String,
        up_off UInt16,
        stack_how String,
        stk_pieces UInt32,
        stk_r_ns UInt64,
        stk_m_ns UInt64
    )
)
ENGINE = ReplacingMergeTree
PARTITION BY toDate(intDiv(ts, 1000000000))
ORDER BY (host, dev, ts, boot, run, id);

-- One row per request's blame line (--blame, docs/blame.md): ts is its request's.
CREATE TABLE IF NOT EXISTS iotracer.requests_blame
(
    host String,
    boot String,
    run UInt64,
    id UInt64,
    ts UInt64,
    by String,
    requests UInt64,
    wait_ns UInt64,
    own_ns UInt64,
    unattributed_ns UInt64,
    self_ns UInt64,
    others_ns UInt64,
    other_ns UInt64,
    victim_dev String,
    victim_devno String,
    victim_cgroup_id UInt64,
    victim_cgroup String,
    victim_pod String,
    victim_namespace String,
    victim_file String,
    culprits Nested(
        cgroup_id UInt64,
        cgroup String,
        pod String,
        namespace String,
        pid UInt32,
        ns UInt64
    )
)
ENGINE = ReplacingMergeTree
PARTITION BY toDate(intDiv(ts, 1000000000))
ORDER BY (host, boot, run, id);
