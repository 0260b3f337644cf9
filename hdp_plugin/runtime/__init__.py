"""What a fit runs on: how numba compiles the kernels (:mod:`.jit`), caches them on disk and ships them
in a wheel (:mod:`.kernel_cache`), says it is compiling (:mod:`.compile_notice`) and compiles the
sampler's ahead in a helper process (:mod:`.warm`); the process-wide threads (:mod:`.threads`), memory
bound (:mod:`.memory`) and cancel check (:mod:`.cancel`) of a fit; and the sort the kernels share
(:mod:`.radix`). Nothing here imports the stages (data, preprocess, structure, hdp, model), and
importing the package loads nothing: ``hdp-bnc --help`` stays light."""
