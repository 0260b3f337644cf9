"""Every default, limit and tunable of hdp_plugin, in one place.

What stays with its code are the constants of a file format (magic numbers, the spool's names, the
model file's columns), numerical guards of a kernel, and the sizes of read buffers. How numba compiles
and caches the kernels is :mod:`hdp_plugin.runtime.jit`.
"""

from __future__ import annotations

# --- data ---------------------------------------------------------------------------------
#: an attribute whose distinct values exceed this fraction of the rows looks like an ID column
ID_COLUMN_FRACTION = 0.9
#: minimum number of rows before the ID-column warning is considered
ID_COLUMN_MIN_ROWS = 20
#: rows per block for streaming reductions (counting passes)
ROW_BLOCK = 65536
#: SkDB's passes over in-memory rows take blocks of about this many seconds (from 1024 rows up to
#: ROW_BLOCK), so that a cancel is seen between them soon; the sums do not depend on the blocks
STRUCTURE_BLOCK_SECONDS = 0.25
#: most values (rows x columns) a columnar file (Arrow, Feather, Parquet, CSV) may declare or decode to;
#: checked before the values are decoded into arrays (about 8 bytes each)
MAX_CELLS = 1 << 28
#: most bytes an Arrow IPC or Feather file may decode to: this floor, or this many times the file's size
MAX_DECODED_BYTES_FLOOR = 1 << 30
MAX_DECODED_RATIO = 64
#: working memory of training (hdp_plugin.data.limits): about this many bytes per value (rows x columns) of
#: the data, and as many more per ESKDB member built at once;
#: where --max-input-mb applies (hdp-bnc, the daemon), data whose estimate exceeds WORKING_MEMORY_FACTOR
#: times --max-input-mb is refused before it is decoded into codes
WORKING_BYTES_PER_VALUE = 48
WORKING_MEMORY_FACTOR = 4
#: an ARFF header's declarations while its file is read (the header, the readers' lookup tables): about this
#: many bytes an attribute and a label, plus their text;
#: a header whose declarations would take more than the working memory above is refused while it is parsed
HEADER_BYTES_PER_ATTRIBUTE = 1024
HEADER_BYTES_PER_LABEL = 192

# --- discretisation -----------------------------------------------------------------------
DISCRETIZATIONS = ("mdl", "stochastic-mdl", "stochastic-gain", "equal-frequency", "equal-width", "none")
#: the methods that draw cut points from a seed (an ESKDB member from its own): "stochastic-mdl" is the
#: ESKDB of the method's authors, "stochastic-gain" ours (cuts drawn by information gain, each kept while it
#: passes the MDL test, at least two per informative attribute; benchmarks/bench_numeric.py, docs/benchmarks.md)
STOCHASTIC_DISCRETIZATIONS = ("stochastic-mdl", "stochastic-gain")
DEFAULT_DISCRETIZATION = "mdl"
#: the classifier's default, "auto": stochastic gain for an ESKDB ensemble (better than the stochastic MDL
#: on 0-1 loss, RMSE and log-loss over 30 data sets, docs/benchmarks.md), MDL otherwise
AUTO_DISCRETIZATION = {"eskdb": "stochastic-gain"}
#: number of bins for the unsupervised binning methods (Weka's default is 10)
DEFAULT_BINS = 10
#: the most distinct values a column declared categorical (``categorical_features``) may have
MAX_CATEGORIES = 10_000

# --- structures ---------------------------------------------------------------------------
#: single networks (what structure learning returns), then ensembles of them
NETWORK_STRUCTURES = ("nb", "tan", "kdb", "skdb")
STRUCTURES = NETWORK_STRUCTURES + ("eskdb",)
DEFAULT_STRUCTURE = "eskdb"
DEFAULT_K = 5
#: the most attribute parents a kDB may have (every face refuses more)
MAX_K = 64
#: ESKDB: members of the ensemble by default, and the most accepted
DEFAULT_MEMBERS = 20
MAX_MEMBERS = 1000

#: TAN, kDB and SkDB refuse pairwise statistics (the n(x_i, x_j, y) table, its offsets and the CMI matrix)
#: larger than this many bytes, before allocating them (an ESKDB counts its members built at once);
#: naive Bayes counts no pairs
MAX_PAIR_BYTES = 4 * 1024**3

# --- estimators ---------------------------------------------------------------------------
ESTIMATORS = ("hdp", "m-estimate", "laplace", "mle")
DEFAULT_ESTIMATOR = "hdp"
DEFAULT_M = 1.0
#: the m of the hierarchical m-estimates with which an ESKDB with HDP tables selects each member's
#: (n*, k*) (docs/method.md, "SkDB"; benchmarks/studies.md, "Selecting members for HDP tables")
HDP_SELECTION_M = 3.0
#: SkDB's leave-one-out selection scores about this many rows of larger data, a subset chosen by a
#: hash of each row (:class:`~hdp_plugin.structure.selective.Smoothing`): the candidates' RMSEs are then
#: known far more finely than they differ, and the pass, which otherwise grows with the rows and is
#: most of a fit on millions of them, stops growing
SELECTION_ROWS = 1 << 16

#: most table cells a model may have (a cell per value of an attribute in each context its tree keeps);
#: checked, counted exactly, before the trees are laid out and sampled. About 160 bytes each while
#: fitting and at most 18 each in a model file (which stores only the cells with training rows): the
#: default keeps a fit under about 2.5 GiB and a model file well under 1 GiB (the Weka wrapper cannot
#: read model files beyond 2 GiB)
MAX_MODEL_CELLS = 1 << 24
#: prediction lays a network's tables out densely (a log-estimate per value of every node, a child slot per
#: value every inner node branches on: 8 bytes each) when that takes at most this many entries, for a direct
#: index per step; a larger network predicts from its sparse cells (the same figures, bit for bit), in memory
#: that grows with the cells stored, so that a small model file cannot expand to gigabytes
MAX_DENSE_VIEW_ENTRIES = 1 << 24
#: the largest model file read (a Java array, and so the Weka package's reader, holds less than 2 GiB):
#: both readers refuse a larger one
MAX_MODEL_FILE_BYTES = (1 << 31) - 17

# --- HDP sampler (docs/method.md section 4) ----------------------------------------
#: the most Gibbs iterations of a single network (the classifier's default, ``iterations=None``,
#: stops every tree once converged, after at most AUTO_ITERATIONS for the structures it names and
#: DEFAULT_ITERATIONS otherwise)
DEFAULT_ITERATIONS = 5000
#: an ESKDB ensemble samples every member's tables: at most 100 iterations each (checked from 25,
#: AUTO_FIRST_CHECK) match its 1000-iteration test accuracy on small data, since the members' Monte Carlo
#: noise averages out, and beat it on numeric data of thousands of rows, where short chains smooth deep
#: contexts less (benchmarks/studies.md, eskdb-rules; docs/benchmarks.md, "How many iterations an
#: ensemble needs")
AUTO_ITERATIONS = {"eskdb": 100}
#: ... and at most AUTO_DENSE_ITERATIONS once the training rows average DENSE_ROWS_PER_CLASS or more per
#: class present: the concentrations drift upwards as a chain runs, so a longer chain smooths the deep
#: contexts of such data more, which costs accuracy there (benchmarks/studies.md, "Dense data: shorter
#: chains")
AUTO_DENSE_ITERATIONS = {"eskdb": 25}
DENSE_ROWS_PER_CLASS = 100
MAX_ITERATIONS = 10_000_000
#: the sampler's stopping rule (``tolerance``): the first iteration a tree may stop at (then every
#: doubling), and the default tolerance on the change of its averaged tables (docs/method.md section 4)
CONVERGENCE_FIRST_CHECK = 500
CONVERGENCE_TOLERANCE = 0.005
#: ... and the first check of the structures named here: an ensemble's tree may stop at 25 iterations,
#: then 50, below its cap of 100 (benchmarks/studies.md, eskdb-rules: the rules against fixed lengths)
AUTO_FIRST_CHECK = {"eskdb": 25}
#: burn-in is min(BURN_IN_CAP, iterations // BURN_IN_DIVISOR) unless given
BURN_IN_CAP = 1000
BURN_IN_DIVISOR = 10
WINDOW = 10
#: iterations per kernel call: progress is reported, and a cancel seen, between chunks
SAMPLER_CHUNK = 50
#: fewer iterations per chunk when 50 take longer than this (seconds): a cancel is seen within about
#: this long however slow an iteration is (the model does not depend on the chunks)
SAMPLER_CHUNK_SECONDS = 0.25
#: the Stirling tables start at least this big (rows of counts, columns of table counts) and grow on demand
STIRLING_MIN_ROWS = 1024
STIRLING_MIN_COLUMNS = 64
#: the most memory the Stirling tables keep for adding columns without streaming the old ones again
#: (the last column's history: 8 bytes a row up to the largest leaf count, 1M rows per 8 MB)
STIRLING_HISTORY_BYTES = 1 << 30
INITIAL_CONCENTRATION = 2.0
ROOT_CONCENTRATION = 2.0
CONCENTRATION_SHAPE = 2.0
CONCENTRATION_RATE = 1.0
MAX_CONCENTRATION = 4000.0
#: concentrations are sampled at iterations where it % CONCENTRATION_EVERY == CONCENTRATION_OFFSET
CONCENTRATION_EVERY = 5
CONCENTRATION_OFFSET = 3
TYINGS = ("none", "same-parent", "level", "single")
DEFAULT_TYING = "level"

# --- model file ---------------------------------------------------------------------------
#: the format this package writes and reads: 4.0, a list of weighted networks whose nodes hold their
#: observed cells and a back-off weight (docs/model-format.md); older majors are refused
MODEL_FORMAT_MAJOR = 4
MODEL_FORMAT_MINOR = 0

# --- the training daemon and its spool (docs/spool-protocol.md) -------------------------
#: ``daemon run`` defaults: worker processes, seconds between looks at new/, seconds running jobs get
#: to finish when the daemon is asked to stop
DAEMON_WORKERS = 1
#: worker processes of the LocalCluster that ``--engine dask`` starts when no scheduler is given
DASK_LOCAL_WORKERS = 2
DAEMON_POLL_SECONDS = 0.5
#: the daemon and the clients look sooner when something just happened: a daemon with an idle worker
#: waits a tenth of the time since its last job (at least BRISK_POLL_SECONDS, at most its --poll) before
#: it lists new/ again, a client a tenth of its job's age before it looks at the job again; the jobs of a
#: cross-validation come one after another (docs/spool-protocol.md section 5), and a look costs only a
#: directory listing or a stat
BRISK_POLL_SECONDS = 0.01
#: a client that has published a job nudges the daemons of its host through their heartbeat's wake_port
#: (hdp_plugin.daemon.wake): the longest it waits for the loopback connection (a nudge lost is only a later
#: look)
WAKE_CONNECT_SECONDS = 0.2
DAEMON_GRACE_SECONDS = 10.0
#: default resource limits of a daemon (``run --max-input-mb/--max-cardinality``; ``--max-cells`` is MAX_CELLS)
DEFAULT_MAX_INPUT_BYTES = 1 << 30
DEFAULT_MAX_CARDINALITY = 10_000
#: largest job.json accepted
MAX_JOB_BYTES = 64 * 1024
#: largest JSON document (heartbeat, progress, result, error, attempts) a reader accepts
MAX_DOC_BYTES = 1 << 20
#: a job dies with too_many_attempts when its daemon or worker died during this many attempts
MAX_ATTEMPTS = 3
#: seconds between heartbeats; a heartbeat older than STALE_HEARTBEATS of them means a dead daemon
HEARTBEAT_SECONDS = 2.0
STALE_HEARTBEATS = 5
#: seconds between progress file updates of a running job
PROGRESS_SECONDS = 0.25
#: seconds between looks for the claims of dead daemons (and while a dead daemon's workers linger)
RECOVERY_SECONDS = 5.0
LINGER_RECOVERY_SECONDS = 0.5
#: a dead daemon's workers are waited for only if its heartbeat is younger than this (seconds)
LINGER_HEARTBEAT_SECONDS = 60.0
#: a worker that does not answer an interrupt within this many seconds is terminated
INTERRUPT_SECONDS = 10.0
#: seconds between a daemon's looks at its own installation (its Python executable, hdp_plugin's files):
#: gone, it puts its running jobs back and exits
INSTALL_CHECK_SECONDS = 2.0
#: on shutdown, seconds the workers get to exit, then seconds to die once terminated
WORKER_EXIT_SECONDS = 10.0
WORKER_TERMINATE_SECONDS = 5.0
#: a worker that dies this many times in a row before it is ready stops the daemon
MAX_WARMUP_FAILURES = 3
#: ``daemon run --worker-memory-mb``: a worker whose resident memory after a job is above this many MiB
#: (after it has given back what the allocators allow) is replaced by a fresh one, since what a job leaves
#: allocated stays with the process and a later job would have that much less (well above what a
#: warmed-up worker holds: a fresh one takes a few seconds to start and warm up); 0: a fresh worker for every job
WORKER_MEMORY_MB = 1024
#: most entries of new/ looked at in one pass (the oldest of them are claimed first)
MAX_WAITING_LISTED = 5000
#: maildir's rule: anything in tmp/ untouched this long is garbage (seconds)
TMP_MAX_AGE_SECONDS = 36 * 3600
#: a progress file or cancel marker of a job found nowhere in the spool (finished and removed by its
#: client, never published) is removed once untouched this long (seconds): long enough that a job moving
#: between states is never taken for gone
STALE_MARKER_SECONDS = 10
#: clients: seconds between looks at a job (``submit --wait``) or at stopping daemons (``stop``)
CLIENT_POLL_SECONDS = 0.2
#: ``daemon stop`` on a path that is not (yet) a whole spool waits this long for a daemon starting on it to
#: make it (a daemon makes its spool once its modules are imported, about a second after it starts), and
#: then, with --wait, this long for that daemon's heartbeat (written a moment after the spool is made)
STOP_SPOOL_WAIT_SECONDS = 10.0
STOP_STARTING_SECONDS = 2.0
#: ``submit --wait``: seconds without a daemon serving the spool before the client says so (once)
NO_DAEMON_NOTICE_SECONDS = 5.0

