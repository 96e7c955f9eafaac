"""Declarations of the canonical tables: column, Arrow type, unit and meaning.

This module is data, not code: ``docs/tables.md`` is generated from it
(``python -m profinsight.schema.docs``), and :mod:`profinsight.schema.conform` enforces it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

#: Extra ``device_tasks`` columns named ``pmu_<metric>`` hold per-kernel PMU metrics: ratios as
#: 0..1 (``pmu_aic_mac_ratio``), times in ns (``pmu_aic_mac_time_ns``), cycle counts as numbers.
PMU_PREFIX = "pmu_"


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    unit: str
    doc: str


@dataclass(frozen=True)
class Table:
    name: str
    doc: str
    columns: tuple[Column, ...]
    #: the columns that identify a row's time order; used to sort after concatenating ranks
    sort_by: tuple[str, ...] = field(default_factory=tuple)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


I64, I32, F64, STR, BOOL = pa.int64(), pa.int32(), pa.float64(), pa.string(), pa.bool_()


def C(name: str, type_: pa.DataType, unit: str, doc: str) -> Column:
    return Column(name, type_, unit, doc)


RANK = C("rank", I32, "", "rank id of the process that recorded the row (0 when the source has none)")
DEVICE = C("device", I32, "", "device (NPU/GPU) index; null for host-only rows")
STEP = C(
    "step", I64, "", "step number N of the `ProfilerStep#N` whose range contains the row's start; null outside any step"
)

DEVICE_TASKS = Table(
    "device_tasks",
    "One row per device task. `kind` is one of kernel, communication, memcpy, memset, sync, "
    "comm_task, other. For an Ascend text export the kernel + communication rows are exactly the "
    "rows of kernel_details.csv.",
    (
        RANK,
        DEVICE,
        C("task_uid", I64, "", "row id, unique within the rank; `launches.task_uid` points here"),
        C("stream", I64, "", "stream id (Ascend stream / CUDA stream); null where the source has none"),
        C("task_id", I64, "", "task id on the stream (Ascend); null where the source has none"),
        C("context_id", I64, "", "sub-task / FFTS+ context id; null when none"),
        C("kind", STR, "", "kernel | communication | memcpy | memset | sync | comm_task | other"),
        C("name", STR, "", "kernel or task name (`trans_TransData_0`, `hcom_allReduce__586_0_1`, `MEMCPY_ASYNC`)"),
        C("type", STR, "", "operator type (`TransData`, `MatMulV2`, `hcom_allReduce_`); null/`N/A` when not collected"),
        C(
            "core",
            STR,
            "",
            "accelerator core: AI_CORE, AI_VECTOR_CORE, MIX_AIC, MIX_AIV, AI_CPU, DSA_SQE, "
            "HCCL (communication) ... ; GPU: GPU, NCCL/RCCL, DMA",
        ),
        C("start_ns", I64, "ns", "task start, epoch ns (exact)"),
        C("dur_ns", I64, "ns", "task duration"),
        C(
            "wait_ns",
            I64,
            "ns",
            "gap between the end of the preceding task and this start, as the vendor wrote it; "
            "null where the source has none",
        ),
        STEP,
        C("block_dim", I64, "", "cores (blocks) used; 0 when not collected"),
        C("mix_block_dim", I64, "", "secondary-core block count of MIX kernels"),
        C("op_state", STR, "", "`dynamic` / `static` shape compilation state (Ascend)"),
        C("input_shapes", STR, "", "input tensor shapes, tensors separated by `;`, dims by `,` (quotes removed)"),
        C("input_dtypes", STR, "", "input data types, `;`-separated"),
        C("input_formats", STR, "", "input formats (NCHW, NC1HWC0, FRACTAL_Z, ND ...), `;`-separated"),
        C("output_shapes", STR, "", "output tensor shapes"),
        C("output_dtypes", STR, "", "output data types"),
        C("output_formats", STR, "", "output formats"),
        C("connection_id", I64, "", "launch link id within the rank (Ascend connection_id, CUDA correlation)"),
        C("comm_op", STR, "", "comm_task rows: name of the parent collective; communication rows: their own name"),
        C("group", STR, "", "communication group (as the source names it)"),
        C("src_rank", I64, "", "comm_task: source rank of a transfer"),
        C("dst_rank", I64, "", "comm_task: destination rank of a transfer"),
        C("transport", STR, "", "comm_task: SDMA | RDMA | LOCAL ..."),
        C("link_type", STR, "", "comm_task: ON_CHIP | HCCS | PCIE | ROCE | SIO ..."),
        C("bytes", I64, "bytes", "bytes moved (memcpy, comm_task transfer); null when unknown"),
    ),
    sort_by=("rank", "start_ns"),
)

HOST_OPS = Table(
    "host_ops",
    "Framework (host) events: `op` (cpu_op: aten ops, NPU ops, ProfilerStep#N), `annotation` "
    "(user record_function ranges), `queue` (task-queue Enqueue/Dequeue), `python` (Python frames, "
    "with_stack/with_modules).",
    (
        RANK,
        C("op_id", I64, "", "row id, unique within the rank; `launches.host_op_id` points here"),
        C("pid", I64, "", "OS process id"),
        C("thread", I64, "", "OS thread id"),
        C("category", STR, "", "op | annotation | queue | python"),
        C("name", STR, "", "op name (`aten::conv2d`, `ProfilerStep#50`, `Dequeue@Conv2D`)"),
        C("start_ns", I64, "ns", "start, epoch ns"),
        C("dur_ns", I64, "ns", "host duration"),
        STEP,
        C("sequence", I64, "", "autograd sequence number (forward/backward pairing)"),
        C("fwd_thread", I64, "", "forward thread id of a backward op"),
        C(
            "input_shapes",
            STR,
            "",
            "input dims, one entry per input joined by `;` (empty entries for non-tensor inputs kept), dims by `,` (record_shapes)",
        ),
        C("input_dtypes", STR, "", "input types, `;`-separated (record_shapes)"),
        C(
            "call_stack",
            STR,
            "",
            "Python call stack, innermost frame first, one frame (`path(line): func`) per line (with_stack)",
        ),
        C("host_self_ns", I64, "ns", "host duration minus direct children, where the source has it"),
        C("device_self_ns", I64, "ns", "device time of tasks launched directly by this op, where the source has it"),
        C("device_total_ns", I64, "ns", "device time of tasks of this op and its descendants, where the source has it"),
        C("external_id", I64, "", "Kineto `External id` (links kernels to the op); null elsewhere"),
    ),
    sort_by=("rank", "start_ns"),
)

LAUNCHES = Table(
    "launches",
    "Links from a host op or a runtime/CANN API call to a device task it launched.",
    (
        RANK,
        C("host_op_id", I64, "", "`host_ops.op_id` of the framework op, or null"),
        C("api_call_id", I64, "", "`api_calls.call_id` of the launching runtime/CANN API, or null"),
        C("task_uid", I64, "", "`device_tasks.task_uid` of the launched task"),
        C(
            "link",
            STR,
            "",
            "how the link was recorded: torch_to_npu | HostToDevice | connection_id | correlation | external_id",
        ),
    ),
    sort_by=("rank", "task_uid"),
)

#: the vendor's per-step figures a ``steps`` row may carry: (``steps`` column, the ``step_breakdown``
#: column it becomes where the rank has no device task, the vendor's column it comes from)
VENDOR_STEP_FIGURES = (
    ("vendor_computing_ns", "computing_us", "Computing"),
    ("vendor_comm_not_overlapped_ns", "comm_not_overlapped_us", "Communication(Not Overlapped)"),
    ("vendor_overlapped_ns", "overlapped_us", "Overlapped"),
    ("vendor_comm_ns", "comm_us", "Communication"),
    ("vendor_free_ns", "free_us", "Free"),
    ("vendor_stage_ns", "step_us", "Stage"),
    ("vendor_bubble_ns", "bubble_us", "Bubble"),
    (
        "vendor_comm_not_overlapped_exclude_receive_ns",
        "comm_not_overlapped_exclude_receive_us",
        "Communication(Not Overlapped and Exclude Receive)",
    ),
    ("vendor_preparing_ns", "preparing_us", "Preparing"),
)

STEPS = Table(
    "steps",
    "One row per rank and step: the host `ProfilerStep#N` range and the device range "
    "(first to last device task launched inside the host step, ending no earlier than the host step). "
    "A rank without device tasks (a partial export, a cluster summary) has no ranges but carries the "
    "vendor's own per-step figures in the `vendor_*` columns.",
    (
        RANK,
        C("step", I64, "", "step number N of `ProfilerStep#N`"),
        C("host_start_ns", I64, "ns", "host step start"),
        C("host_end_ns", I64, "ns", "host step end"),
        C("device_start_ns", I64, "ns", "first device task of the step; null when none"),
        C("device_end_ns", I64, "ns", "max(last device task end, host step end); null when no task"),
        C(
            "vendor_device",
            I64,
            "",
            "`Device_id` of the vendor's step summary (the NPU the rank ran on, not the rank); "
            "null where the rank's own tasks are the source",
        ),
        *(
            C(
                col,
                I64,
                "ns",
                f"the vendor's own {vendor} of the step, from step_trace_time.csv / StepTraceTime / the cluster "
                f"step trace (`step_breakdown.{us}` of a rank without device tasks); null where the rank's own "
                "tasks are the source",
            )
            for col, us, vendor in VENDOR_STEP_FIGURES
        ),
    ),
    sort_by=("rank", "step"),
)

MEMORY_SAMPLES = Table(
    "memory_samples",
    "The device memory curve: one sample per allocator event (PTA, GE, PTA+GE, WORKSPACE, CUDA) or "
    "periodic process reading (APP).",
    (
        RANK,
        DEVICE,
        C("component", STR, "", "PTA | GE | PTA+GE | APP | WORKSPACE | CUDA | CPU"),
        C("ts_ns", I64, "ns", "sample time, epoch ns"),
        C("allocated_bytes", I64, "bytes", "total allocated; null when not recorded (APP)"),
        C("reserved_bytes", I64, "bytes", "total reserved by the allocator (APP: process device memory)"),
        C("active_bytes", I64, "bytes", "total active; null when not recorded"),
        C("stream_ptr", STR, "", "opaque stream address of the allocator event"),
    ),
    sort_by=("rank", "component", "ts_ns"),
)

MEMORY_BLOCKS = Table(
    "memory_blocks",
    "One row per tensor allocation: which op allocated how much, when it was freed.",
    (
        RANK,
        DEVICE,
        C("name", STR, "", "allocating op (`aten::empty_strided`, `cann::ReduceSum7`)"),
        C("component", STR, "", "PTA (framework allocator) | GE (graph engine) | CUDA"),
        C("size_bytes", I64, "bytes", "block size (negative: allocated before the capture window)"),
        C("alloc_ns", I64, "ns", "allocation time; null when before the window"),
        C("release_ns", I64, "ns", "free call; null when freed after the window"),
        C("active_release_ns", I64, "ns", "block returned to the pool; null when unknown"),
        C("alloc_total_allocated_bytes", I64, "bytes", "allocator total allocated at allocation"),
        C("alloc_total_reserved_bytes", I64, "bytes", "allocator total reserved at allocation"),
        C("alloc_total_active_bytes", I64, "bytes", "allocator total active at allocation"),
        C("release_total_allocated_bytes", I64, "bytes", "allocator total allocated at release"),
        C("release_total_reserved_bytes", I64, "bytes", "allocator total reserved at release"),
        C("release_total_active_bytes", I64, "bytes", "allocator total active at release"),
        C("stream_ptr", STR, "", "opaque stream address"),
        C("addr", STR, "", "block address where recorded (Kineto)"),
    ),
    sort_by=("rank", "alloc_ns"),
)

MODULE_MEMORY = Table(
    "module_memory",
    "Device memory reserved per CANN component (SLOG, HCCL, RUNTIME, GE, APP ...), sampled periodically.",
    (
        RANK,
        DEVICE,
        C("component", STR, "", "CANN module name"),
        C("ts_ns", I64, "ns", "sample time"),
        C(
            "reserved_bytes",
            I64,
            "bytes",
            "memory reserved by the component (-1 MiB in the source: only releases seen)",
        ),
    ),
    sort_by=("rank", "component", "ts_ns"),
)

COMM_OPS = Table(
    "comm_ops",
    "One row per collective / point-to-point communication op, with the vendor's time split "
    "(transit, wait, synchronisation, idle) and the bytes and transit time per link type.",
    (
        RANK,
        DEVICE,
        STEP,
        C("name", STR, "", "op name (`hcom_allReduce__586_0_1`, `ncclDevKernel_AllReduce...`)"),
        C("type", STR, "", "op type (`hcom_allReduce_`, `allreduce`)"),
        C("category", STR, "", "collective | p2p"),
        C("group", STR, "", "group id as the source names it (hash in the text export, raw name in the DB)"),
        C("start_ns", I64, "ns", "op start on the device"),
        C("dur_ns", I64, "ns", "elapsed time of the op"),
        C("transit_ns", I64, "ns", "time spent moving data; null when not analysed (Level0, GPU)"),
        C("wait_ns", I64, "ns", "time waiting for peers before data moved"),
        C("sync_ns", I64, "ns", "synchronisation part of the wait"),
        C("idle_ns", I64, "ns", "elapsed - transit - wait"),
        C("bytes", I64, "bytes", "bytes transferred by this rank (sum over link types, SDMA not double counted)"),
        C("hccs_bytes", I64, "bytes", "bytes over HCCS"),
        C("hccs_transit_ns", I64, "ns", "transit time over HCCS"),
        C("rdma_bytes", I64, "bytes", "bytes over RDMA"),
        C("rdma_transit_ns", I64, "ns", "transit time over RDMA"),
        C("pcie_bytes", I64, "bytes", "bytes over PCIe"),
        C("pcie_transit_ns", I64, "ns", "transit time over PCIe"),
        C("sdma_bytes", I64, "bytes", "bytes over SDMA (aggregate of on-node links; duplicates HCCS)"),
        C("sdma_transit_ns", I64, "ns", "transit time over SDMA"),
        C("sio_bytes", I64, "bytes", "bytes over SIO"),
        C("sio_transit_ns", I64, "ns", "transit time over SIO"),
        C("data_type", STR, "", "element data type"),
        C("count", I64, "", "element count"),
        C("algorithm", STR, "", "algorithm (`MESH-RING`)"),
    ),
    sort_by=("rank", "start_ns"),
)

COMM_LINKS = Table(
    "comm_links",
    "The rank-to-rank communication matrix: per step, op type, group and link, the vendor's "
    "summaries (top1, middle, bottom1..3, total) of transfers over that link.",
    (
        RANK,
        STEP,
        C("category", STR, "", "collective | p2p"),
        C("op_type", STR, "", "lower-case op type (allreduce, allgather, send ...)"),
        C("summary", STR, "", "top1 | middle | bottom1 | bottom2 | bottom3 | total"),
        C("group", STR, "", "group id"),
        C("src_rank", I64, "", "source rank of the link (communicator rank)"),
        C("dst_rank", I64, "", "destination rank"),
        C("transport", STR, "", "LOCAL | HCCS | PCIE | RDMA | SIO | SDMA"),
        C("bytes", I64, "bytes", "bytes over the link"),
        C("transit_ns", I64, "ns", "transit time over the link"),
        C("op_name", STR, "", "the concrete op behind the summary row"),
    ),
    sort_by=("rank", "step", "src_rank", "dst_rank"),
)

API_CALLS = Table(
    "api_calls",
    "Runtime-level API calls: CANN (acl, node, hccl, runtime, model) or CUDA/HIP runtime and driver.",
    (
        RANK,
        C("call_id", I64, "", "row id, unique within the rank; `launches.api_call_id` points here"),
        C("pid", I64, "", "OS process id where known"),
        C("thread", I64, "", "OS thread id"),
        C("level", STR, "", "acl | node | hccl | runtime | model | cuda_runtime | cuda_driver"),
        C("name", STR, "", "API name (`aclnnInplaceCopy`, `launch`, `cudaLaunchKernel`)"),
        C("start_ns", I64, "ns", "start"),
        C("dur_ns", I64, "ns", "duration"),
        C("connection_id", I64, "", "link id to the device tasks it launched (connection_id / correlation)"),
        C("item", STR, "", "what was launched (`trans_TransData_0`) where recorded"),
    ),
    sort_by=("rank", "start_ns"),
)

COUNTERS = Table(
    "counters",
    "Time series: AI Core frequency, HBM/LLC bandwidth, NPU memory, accelerator PMU levels, QoS ...",
    (
        RANK,
        DEVICE,
        C("track", STR, "", "counter group (`AI Core Freq`, `HBM`, `LLC`, `NPU MEM`)"),
        C("name", STR, "", "series name (`HBM 0/Read`, `APP/HBM`)"),
        C("ts_ns", I64, "ns", "sample time"),
        C("value", F64, "", "sample value, in `unit`"),
        C("unit", STR, "", "unit of `value` (MHz, MB/s, KB, %, level)"),
    ),
    sort_by=("rank", "track", "name", "ts_ns"),
)

TRACE_SLICES = Table(
    "trace_slices",
    "Every other timeline event (overlap analysis lanes, GC pauses, GPU annotations, instant "
    "markers ...), so that the timeline can show everything that was recorded.",
    (
        RANK,
        C("process", STR, "", "process (unit) name as recorded"),
        C("thread", STR, "", "thread / lane name"),
        C("name", STR, "", "event name"),
        C("cat", STR, "", "event category where recorded"),
        C("start_ns", I64, "ns", "start"),
        C("dur_ns", I64, "ns", "duration (0 for instant events)"),
        C("args", STR, "", "remaining event arguments as a JSON object text"),
    ),
    sort_by=("rank", "start_ns"),
)

RUN_INFO = Table(
    "run_info",
    "One row per rank: where it came from and how it was collected.",
    (
        RANK,
        DEVICE,
        C("source_format", STR, "", "ascend_text | ascend_db | kineto"),
        C("path", STR, "", "the rank folder or trace file"),
        C("profiler_level", STR, "", "Level_none | Level0 | Level1 | Level2 (Ascend); null elsewhere"),
        C("activities", STR, "", "recorded activities, comma-separated (CPU, NPU, CUDA)"),
        C("record_shapes", BOOL, "", "shapes were recorded"),
        C("profile_memory", BOOL, "", "memory was recorded"),
        C("with_stack", BOOL, "", "Python call stacks were recorded"),
        C("with_modules", BOOL, "", "module frames were recorded"),
        C("aic_metrics", STR, "", "AI Core PMU metric set"),
        C("schedule", STR, "", "profiler schedule as JSON"),
        C("env", STR, "", "profiling-relevant environment variables as a JSON object"),
        C("versions", STR, "", "software versions found in the profile, as a JSON object (empty when none)"),
        C("device_name", STR, "", "chip / GPU name (`Ascend910B`, `NVIDIA A100`)"),
        C("host", STR, "", "host name where recorded"),
        C("world_size", I64, "", "number of ranks of the job where recorded"),
        C("collect_start_ns", I64, "ns", "collection start"),
        C("collect_end_ns", I64, "ns", "collection end"),
        C("extra", STR, "", "other configuration and metadata as JSON"),
        # capabilities: what downstream code reads instead of asking which format this was
        C("device_family", STR, "", "the accelerator kind the profile records: npu | gpu | cpu (no device activity)"),
        C(
            "export_kind",
            STR,
            "",
            "how the profiler wrote it: text | db (torch_npu exports) | trace (one trace file) | "
            "cluster_summary (msprof-analyze's per-rank figures, no per-task data)",
        ),
        C("has_host_ops", BOOL, "", "host operators were recorded (host_ops has rows)"),
        C("has_memory", BOOL, "", "memory was recorded (memory_samples or memory_blocks has rows)"),
        C("has_pmu", BOOL, "", "per-kernel PMU metrics were recorded (some pmu_* column of device_tasks has a value)"),
        C("has_stack", BOOL, "", "Python call stacks were recorded (some host_ops.call_stack has a value)"),
    ),
    sort_by=("rank",),
)

TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        DEVICE_TASKS,
        HOST_OPS,
        LAUNCHES,
        STEPS,
        MEMORY_SAMPLES,
        MEMORY_BLOCKS,
        MODULE_MEMORY,
        COMM_OPS,
        COMM_LINKS,
        API_CALLS,
        COUNTERS,
        TRACE_SLICES,
        RUN_INFO,
    )
}
