"""Where numba caches hdp_plugin's kernels, and the kernels a wheel carries compiled.

**One cache directory per kernel source.** numba checks a cache entry against the source file of its
own function only: a kernel that calls a kernel of another file, or reads a constant of
``config.py``, would be loaded stale after that other file changed. So hdp_plugin's kernels are
cached by a locator of their own (``PackageLocator``, put first in numba's list of locators; every
other package's functions keep numba's): under ``<cache root>/hdp_plugin-<digest>/``, where the
digest is a SHA-256 of every source file that holds kernels (those that use ``NJIT_OPTIONS``,
and ``config.py``, whose constants they read), and that same digest is the stamp numba checks in every entry. A change to
any of them gives a new directory, never an entry compiled from other sources. The cache root is
``NUMBA_CACHE_DIR`` when set (or the fallback of :func:`hdp_plugin.runtime.jit._numba_cache_dir`), else
numba's per-user cache directory.

**Kernels compiled when the wheel is built.** ``python -m hdp_plugin.runtime.kernel_cache build`` (run by
``tools/build_wheel.py`` inside the copy of the source that becomes the wheel) runs a few default fits
and a prediction on small generated data sets, in a process of their own, and stores the entries
numba wrote into ``hdp_plugin/_kernels/`` with a manifest: the digest, numba's version, the Python
cache tag and numba's code-generation target (triple, CPU name, CPU features). On first use,
:func:`install` copies them into the cache directory of the digest if that directory does not exist
yet and the manifest matches this process exactly (same sources, numba, Python and CPU); otherwise it
copies nothing and numba compiles as without them. The copy is prepared under a temporary name and
renamed into place, so concurrent processes never see half a directory. numba still checks every
entry (its version, the stamp, the signature and the target), so the bundle can only save the
compilation, never change a result.

**A portable bundle for every other CPU of the platform.** The wheel also carries the same kernels
compiled for numba's ``generic`` CPU (``_kernels_generic/``: no instruction beyond the architecture's
baseline, so they run on any CPU of the wheel's platform; the same results bit for bit, and about the
same speed: the kernels are scalar code). When the native bundle does not fit this CPU but the
portable one fits (same sources, numba, Python and target triple), :func:`seed` copies the portable
one in, and hdp_plugin's kernels, when numba finds no entry for this CPU, look for the generic CPU's
entry of the same signature and load it (:func:`_install_portable_lookup`, which only ever accepts
entries compiled for ``(this triple, "generic", "")``: code that every CPU of the triple runs). numba's
target stays the process's own, so a program's own numba functions are not touched, and anything
compiled anew is compiled, and cached, for this CPU, as numba does by default.

Cache directories of older digests are left where they are (a few MB each); removing
``<cache root>/hdp_plugin-*`` is always safe.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

log = logging.getLogger(__name__)

#: the package's folder (hdp_plugin/): kernel sources, cache subfolders and bundles are named from it
PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: the compiled kernels a wheel carries, inside the package
BUNDLE_DIR = "_kernels"
#: the same kernels compiled for numba's generic CPU (see the module docstring)
PORTABLE_BUNDLE_DIR = "_kernels_generic"
PORTABLE_CPU = "generic"
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1
#: the mark of a source file that holds kernels (or, for runtime/jit.py, their options)
_KERNEL_MARK = "NJIT_OPTIONS"
#: sources in the digest without the mark: the constants the kernels read
_KERNEL_CONSTANTS = ("config.py",)

_state: dict = {"digest": None, "installed": False, "root": None, "dir": None, "locator": None}


def kernel_sources(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """The package's source files that hold kernels (and ``config.py``), sorted by their path in the package."""
    found = []
    for path in package_dir.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        if path.relative_to(package_dir).as_posix() in _KERNEL_CONSTANTS:
            found.append(path)
            continue
        try:
            if _KERNEL_MARK in path.read_text(encoding="utf-8"):
                found.append(path)
        except (OSError, UnicodeDecodeError):
            continue
    return sorted(found, key=lambda p: p.relative_to(package_dir).as_posix())


def kernel_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 (hex) of the kernel sources' relative paths and bytes."""
    if package_dir == PACKAGE_DIR and _state["digest"] is not None:
        return _state["digest"]
    h = hashlib.sha256()
    for path in kernel_sources(package_dir):
        h.update(path.relative_to(package_dir).as_posix().encode())
        h.update(b"\0")
        data = path.read_bytes()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    digest = h.hexdigest()
    if package_dir == PACKAGE_DIR:
        _state["digest"] = digest
    return digest


def cache_dir_name(digest: str, cpu_name: str | None = None) -> str:
    """The cache directory of a digest, for numba's native target or, when numba's ``CPU_NAME`` is set
    (the portable target, or the user's ``NUMBA_CPU_NAME``), for that CPU."""
    tag = "".join(c if c.isalnum() or c in "-_." else "_" for c in cpu_name) if cpu_name else ""
    return f"hdp_plugin-{digest[:16]}" + (f"-cpu-{tag}" if tag else "")


def _cache_root() -> str | None:
    """NUMBA_CACHE_DIR (numba's config, which jit._setup_numba may have set), else numba's
    per-user cache directory."""
    import numba

    root = getattr(numba.config, "CACHE_DIR", "") or ""
    if root:
        return root
    try:
        from numba.misc.appdirs import AppDirs
    except ImportError:  # pragma: no cover - numba moved its helper: numba's own locators then
        return None
    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def _subdir(py_file: str) -> str | None:
    """The file's folder relative to the package (``"."`` for the package's own), or None outside it."""
    try:
        rel = Path(py_file).resolve().parent.relative_to(PACKAGE_DIR)
    except ValueError:
        return None
    return rel.as_posix()


def _target_magic() -> list:
    """numba's code-generation target of this process: (triple, CPU name, CPU features)."""
    from numba.core.registry import cpu_target

    return list(cpu_target.target_context.codegen().magic_tuple())


def _host_target() -> list:
    """What :func:`_target_magic` will be, computed as numba's codegen computes it but without making
    the codegen (which :func:`install` need not pay for before the first kernel compiles or loads)."""
    import llvmlite.binding as ll
    from numba.core import codegen
    from numba.core import config as nconfig

    features = nconfig.CPU_FEATURES if nconfig.CPU_FEATURES is not None else codegen.get_host_cpu_features()
    return [ll.get_process_triple(), nconfig.CPU_NAME or ll.get_host_cpu_name(), features]


def _portable_target() -> list:
    import llvmlite.binding as ll

    return [ll.get_process_triple(), PORTABLE_CPU, ""]


def _python_tag() -> str:
    return "py%d%d" % sys.version_info[:2]  # what numba puts in its cache file names


def _make_locator_class():
    from numba.core import caching

    base = getattr(caching, "_CacheLocator", None)
    if base is None:
        return None

    class PackageLocator(base):
        """numba cache locator for hdp_plugin's kernels (see the module's docstring)."""

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            sub = _subdir(py_file)
            self._cache_path = os.path.join(_state["root"], _state["dir"],
                                            "_" if sub == "." else sub.replace("/", "_"))

        def ensure_cache_path(self):
            os.makedirs(self._cache_path, exist_ok=True)
            tempfile.TemporaryFile(dir=self._cache_path).close()  # writable, as numba's locators check

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return "hdp_plugin-kernels-" + kernel_digest()

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            if _state["root"] is None or _subdir(py_file) is None or not os.path.isfile(py_file):
                return None
            self = cls(py_func, py_file)
            try:
                self.ensure_cache_path()
            except OSError:  # not writable: numba's own locators then
                return None
            return self

    return PackageLocator


def install() -> None:
    """Put the package's locator (``PackageLocator``) first in numba's locators and fill the digest's
    cache directory from the wheel's compiled kernels when they fit. Called once, before the first kernel is decorated
    (``jit._setup_numba``); never raises (at worst numba's own locators and compilation remain)."""
    if _state["installed"]:
        return
    _state["installed"] = True
    try:
        from numba.core import caching

        impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
        locators = getattr(impl, "_locator_classes", None)
        root = _cache_root()
        cls = _make_locator_class()
        if not isinstance(locators, list) or root is None or cls is None:
            return
        from numba.core import config as nconfig

        _state["root"] = root
        _state["dir"] = cache_dir_name(kernel_digest(), nconfig.CPU_NAME)
        _state["locator"] = cls
        locators.insert(0, cls)
        _install_portable_lookup(caching)
        seed(root)
    except Exception as exc:  # noqa: BLE001 - only ever an optimisation
        log.debug("hdp_plugin's kernel cache locator not installed: %s", exc)


def _install_portable_lookup(caching) -> None:
    """Make numba's cache, for hdp_plugin's kernels only, fall back to the entry compiled for the generic
    CPU of this process's triple when it has none for this process's target (see the module docstring).
    Entries are still saved for this process's own target."""
    original = caching.Cache._load_overload
    if getattr(original, "_hdp_portable", False):
        return

    def _load_overload(self, sig, target_context):
        data = original(self, sig, target_context)
        locator = getattr(getattr(self, "_impl", None), "locator", None)
        if data is not None or not self._enabled or _state["locator"] is None \
                or not isinstance(locator, _state["locator"]):
            return data
        key = self._index_key(sig, target_context.codegen())
        portable = (key[0], (key[1][0], PORTABLE_CPU, ""), *key[2:])
        if portable == key:
            return None
        try:
            entry = self._cache_file.load(portable)
            return None if entry is None else self._impl.rebuild(target_context, entry)
        except Exception as exc:  # noqa: BLE001 - only ever an optimisation: numba compiles instead
            log.debug("portable kernel entry not loaded: %s", exc)
            return None

    _load_overload._hdp_portable = True
    caching.Cache._load_overload = _load_overload


def _bundle(package_dir: Path, portable: bool) -> Path:
    """The folder of the package's native (or portable) compiled kernels."""
    return package_dir / (PORTABLE_BUNDLE_DIR if portable else BUNDLE_DIR)


def read_manifest(package_dir: Path = PACKAGE_DIR, portable: bool = False) -> dict | None:
    path = _bundle(package_dir, portable) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def bundle_mismatch(manifest: dict | None, target: list | None = None) -> str | None:
    """Why the wheel's compiled kernels do not fit this process (or ``target``, numba's (triple, CPU name,
    CPU features)), or None if they do."""
    import numba

    if manifest is None:
        return "no compiled kernels in this installation"
    expected = {"format": MANIFEST_FORMAT, "digest": kernel_digest(), "numba": numba.__version__,
                "python": _python_tag(), "target": _host_target() if target is None else target}
    for key, value in expected.items():
        if manifest.get(key) != value:
            return f"built for another {key}"
    files = manifest.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return "a manifest without its file list"
    return None


def seed(root: str) -> bool:
    """Copy the wheel's compiled kernels into ``root``'s directory of this digest and target
    (``_state["dir"]``, set by :func:`install`), if it does not exist yet and a manifest fits. True if
    they were copied."""
    final = Path(root) / _state["dir"]
    if final.exists():
        return False
    # this CPU's own kernels if the wheel has them, else the generic CPU's (which every CPU of the
    # triple runs: _install_portable_lookup finds them)
    portable = False
    manifest = read_manifest()
    why = bundle_mismatch(manifest)
    if why is not None:
        portable = True
        manifest = read_manifest(portable=True)
        why_portable = bundle_mismatch(manifest, _portable_target())
        if why_portable is not None:
            log.debug("compiled kernels not used: %s; the portable ones: %s", why, why_portable)
            return False
    bundle = _bundle(PACKAGE_DIR, portable)
    temp = Path(root) / f".{final.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"
    try:
        for rel in manifest["files"]:
            parts = Path(rel).parts
            if len(parts) != 2 or any(p in ("", ".", "..") for p in parts):  # <subdir>/<file>, nothing else
                raise ValueError(f"unexpected path in the manifest: {rel!r}")
            (temp / parts[0]).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(bundle / rel, temp / rel)
        try:
            os.rename(temp, final)  # atomic; fails if another process got there first
        except OSError:
            return False
        log.debug("compiled kernels copied into %s", final)
        return True
    except (OSError, ValueError) as exc:
        log.debug("compiled kernels not copied: %s", exc)
        return False
    finally:
        if temp.exists():
            shutil.rmtree(temp, ignore_errors=True)


# --- building the bundle (tools/build_wheel.py) -----------------------------------------------------

def _write_arff(path: Path, n_rows: int, numeric: int, nominal: int, seed: int) -> None:
    """A small data set of 3 classes, with missing values, that a default fit learns something from."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n_rows)
    lines = ["@relation warmup"]
    lines += [f"@attribute n{j} numeric" for j in range(numeric)]
    lines += [f"@attribute c{j} {{a,b,c,d}}" for j in range(nominal)]
    lines += ["@attribute class {x,y,z}", "@data"]
    cols = []
    for _ in range(numeric):
        cols.append([f"{v:.4f}" for v in y + rng.normal(0, 1, n_rows)])
    for _ in range(nominal):
        cols.append(["abcd"[min(3, int(c))] for c in (y + rng.integers(0, 2, n_rows))])
    for col in cols:
        for i in rng.choice(n_rows, max(1, n_rows // 20), replace=False):
            col[i] = "?"
    for i in range(n_rows):
        lines.append(",".join([c[i] for c in cols] + ["xyz"[y[i]]]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


#: what the bundle compiles (command lines of ``hdp-bnc``): the default on numeric, mixed and nominal
#: data, a prediction, a single kDB as the README's first example trains it, and naive Bayes
WORKLOAD = (
    ("train", "mixed.arff", "-o", "mixed.model", "--seed", "0"),
    ("train", "numeric.arff", "-o", "numeric.model", "--seed", "0"),
    ("train", "nominal.arff", "-o", "nominal.model", "--seed", "0"),
    ("predict", "mixed.model", "mixed.arff", "-o", "mixed.csv"),
    ("train", "mixed.arff", "-s", "kdb", "-k", "3", "-o", "kdb.model", "--seed", "0"),
    ("train", "mixed.arff", "-s", "nb", "-o", "nb.model", "--seed", "0"),
)


def build(package_dir: Path, python: str = sys.executable, workload=WORKLOAD) -> list[dict]:
    """Compile the kernels of ``workload`` (command lines of ``hdp-bnc``, run one after the other in one
    process, in a folder holding the data sets mixed.arff, numeric.arff and nominal.arff) for the
    package at ``package_dir`` (a copy about to become a wheel), for this CPU and for the generic one
    (two processes at once), and store them in its ``_kernels/`` and ``_kernels_generic/`` with their
    manifests (:func:`store`). Returns the two manifests."""
    package_dir = Path(package_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="hdp-kernels-") as tmp:
        work = Path(tmp)
        _write_arff(work / "mixed.arff", 240, 3, 3, 1)
        _write_arff(work / "numeric.arff", 240, 4, 0, 2)
        _write_arff(work / "nominal.arff", 240, 0, 5, 3)
        driver = ("import sys\nfrom hdp_plugin.cli import app\n"
                  f"for args in {[list(a) for a in workload]!r}:\n"
                  "    print(' '.join(args), file=sys.stderr, flush=True)\n"
                  "    app(args, prog_name='hdp-bnc', standalone_mode=False)\n")
        runs = []
        for portable in (False, True):
            cache = work / ("cache-generic" if portable else "cache")
            runs.append((cache, portable, subprocess.Popen(
                [python, "-c", driver], cwd=work, env=_build_env(package_dir, cache, portable),
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        failed = None
        for cache, portable, proc in runs:
            out, err = proc.communicate()
            if proc.returncode != 0 and failed is None:
                failed = " / ".join((err or out).strip().splitlines()[-2:])
        if failed is not None:
            raise RuntimeError("compiling the kernels failed: " + failed)
        return [store(package_dir, cache, python, portable) for cache, portable, _ in runs]


def _build_env(package_dir: Path, cache: Path, portable: bool = False) -> dict:
    """The environment of a process that imports the package at ``package_dir`` and caches its kernels
    under ``cache`` (for the generic CPU if ``portable``)."""
    env = dict(os.environ, PYTHONPATH=str(Path(package_dir).resolve().parent), NUMBA_CACHE_DIR=str(cache),
               HDP_NUMBA_CACHE="1", HDP_WARM_HELPER="always")
    for name in ("NUMBA_DISABLE_JIT", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
        env.pop(name, None)
    if portable:
        env["NUMBA_CPU_NAME"] = PORTABLE_CPU
    return env


def store(package_dir: Path, cache: Path, python: str = sys.executable, portable: bool = False) -> dict:
    """Copy the kernels that processes of ``package_dir``'s package cached under the cache root ``cache``
    (for the generic CPU if ``portable``) into its ``_kernels/`` (``_kernels_generic/``) and write the
    manifest (of ``python``'s numba, Python and CPU). Returns it."""
    package_dir = Path(package_dir).resolve()
    bundle = _bundle(package_dir, portable)
    if bundle.exists():
        shutil.rmtree(bundle)
    probe = [python, "-c", "import json, sys; from hdp_plugin.runtime import kernel_cache as k; "
             "from numba.core import config as c; "
             "print(json.dumps({'digest': k.kernel_digest(), 'target': k._target_magic(), "
             "'numba': __import__('numba').__version__, 'python': k._python_tag(), "
             "'module': k.__file__, 'cpu_name': c.CPU_NAME}))"]
    info = json.loads(subprocess.run(probe, cwd=package_dir.parent, env=_build_env(package_dir, cache, portable),
                                     stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True).stdout)
    if Path(info["module"]).resolve().parents[1] != package_dir:
        raise RuntimeError(f"the kernels were compiled for hdp_plugin at {info['module']}, not at {package_dir}")
    if info["digest"] != kernel_digest(package_dir):
        raise RuntimeError("the kernel sources changed while their kernels compiled")
    if portable and info["target"][1:] != [PORTABLE_CPU, ""]:
        raise RuntimeError(f"the portable kernels were compiled for {info['target']}")
    written = Path(cache) / cache_dir_name(info["digest"], info["cpu_name"])
    files = sorted(p.relative_to(written).as_posix() for p in written.rglob("*")
                   if p.is_file() and p.suffix in (".nbi", ".nbc"))
    if not files:
        raise RuntimeError(f"no kernels were cached under {written}")
    bundle.mkdir()
    for rel in files:
        (bundle / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(written / rel, bundle / rel)
    manifest = {"format": MANIFEST_FORMAT, "digest": info["digest"], "numba": info["numba"],
                "python": info["python"], "target": info["target"], "files": files}
    (bundle / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "build":
        print("usage: python -m hdp_plugin.runtime.kernel_cache build PACKAGE_DIR", file=sys.stderr)
        return 2
    try:
        manifests = build(Path(argv[1]))
    except (OSError, RuntimeError, subprocess.CalledProcessError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for manifest, portable in zip(manifests, (False, True)):
        size = sum((_bundle(Path(argv[1]), portable) / f).stat().st_size for f in manifest["files"])
        print(f"{len(manifest['files'])} compiled kernel files ({size / 1e6:.1f} MB) for {manifest['target'][1]}, "
              f"numba {manifest['numba']}, {manifest['python']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
