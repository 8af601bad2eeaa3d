# Sizing the Fleet: the whole build.
#
#   make            install what is missing, tangle, build, run every chapter's
#                   programs, draw the figures, weave build/book.pdf,
#                   build/solutions.pdf and the drill sheet build/drills.pdf
#   make test       the same, then the whole test-suite through prove
#   make html       the same, then the HTML edition, build/html/index.html:
#                   a page per chapter, with the same numbers and figures
#   make bench      time this book's matrix multiply against OpenBLAS (and
#                   against one core's peak from build/machine.json), and
#                   fleet layout's enumeration of a 16,384-GPU fleet
#   make lab        list the labs (exercises/labs/NAME): name, chapter, title
#   make lab LAB=NAME [WORK=DIR]
#                   grade a student's copy of lab NAME, labs/NAME/ (made from
#                   the skeleton the first time), or the lab's files in DIR;
#                   make lab-NAME is the same (lab-attention, lab-ring,
#                   lab-tp, lab-1f1b, ...)
#   make handout    build/handout.tar.gz: every lab's skeleton and grader
#                   with the book's code they build on, for an instructor;
#                   it builds on its own with gcc, make and MPICH
#   make gpu-check GPU_OUT=DIR
#                   on a machine with nvcc and a GPU: build and run every GPU
#                   test and benchmark, a log and CSV into DIR (build/gpu)
#   make check-sanitize
#                   the programs' tests under ASan and UBSan
#   make clean      remove build/
#
# The build runs in phases, each a fresh make, so that a phase sees the files
# the one before it wrote: deps (Debian packages), tangle (chapters/*.nw into
# code/ and figures/, touching only files whose text changed), then the rest.

SHELL := /bin/bash
.DELETE_ON_ERROR:
.SUFFIXES:

B := build
CHAPTERS := $(sort $(wildcard chapters/[0-9]*.nw))

# ---------------------------------------------------------------- packages --
# Debian package names; the build installs only those that are missing.
PACKAGES := gcc make perl noweb gnuplot-nox texlive-latex-base \
            texlive-latex-recommended texlive-fonts-recommended lmodern \
            texlive-pictures poppler-utils mpich libmpich-dev libopenblas-dev \
            python3-numpy

# CUDA is optional: detected here, never required.
NVCC := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
# The CUDA backend (Appendix "The CUDA backend") is compiled wherever nvcc and
# the toolkit's libraries are found, so that it cannot rot, and run by
# `make gpu-check` on a machine with a GPU. Without them, minigpt links
# code/cuda/absent.c instead, which refuses --device cuda in one line.
# The nvcc on PATH may be a wrapper script, so the toolkit's directory is
# asked of nvcc itself (its _HERE_ is the real bin directory).
# NVCC_ARCH=-arch=sm_80 builds for A100s.
CUDA_HOME := $(if $(NVCC),$(patsubst %/bin,%,$(shell $(NVCC) -dryrun -c -x cu \
  /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$$ _HERE_=//p')))
CUDA := $(if $(and $(NVCC),$(wildcard $(CUDA_HOME)/lib64/libcublas.so),\
          $(wildcard $(CUDA_HOME)/lib64/libcudart.so)),$(CUDA_HOME))
NVCC_ARCH ?= -arch=sm_90
NVCCFLAGS := -std=c++17 -O2 $(NVCC_ARCH) -Werror all-warnings \
             -Xcompiler -Wall,-Wextra,-Werror
# cuBLAS is not linked: code/cuda/layers.cu loads it (dlopen) when a GPU
# program opens the device, through the rpath below, so that a minigpt that
# never uses a GPU does not pay cuBLAS's start-up on every run.
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart \
             -ldl -lstdc++
GPU_BINS := $(B)/bin/gpu-check-layers $(B)/bin/gpu-gemm-bench
# The GPU programs' own code on the emulated backend, built in every build.
EMULATED_BINS := $(B)/bin/minigpt-emulated $(B)/bin/gpu-check-layers-emulated
GPU_OUT ?= $(B)/gpu

# ------------------------------------------------------------- C compiler --
CC := gcc
CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Wall -Wextra -Werror \
          -Wshadow -Wstrict-prototypes -Wmissing-prototypes
LDLIBS := -lm
ifeq ($(SANITIZE),1)
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer \
          -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
endif
OBJ := $(B)/obj

.PHONY: all deps tangle tangle-into index-stream programs runs timed \
        figures book solutions test check-sanitize bench lab handout \
        gpu-check clean info cuda-backend \
        FORCE

# The programs are compiled two at a time (-j2); then the machine is
# measured and every script that times something or starts ranks runs, one
# at a time (-j1, whatever -j make was given), so that no timed run shares
# the machine; then the rest (SHARED below: the scripts that time nothing
# and start no ranks, the figures, the weaving, LaTeX), two at a time.
all:
	@$(MAKE) --no-print-directory deps $(B)/stamp/deps-html
	@$(MAKE) --no-print-directory tangle
	@$(MAKE) --no-print-directory -j2 programs
	@$(MAKE) --no-print-directory -j1 timed
	@$(MAKE) --no-print-directory -j2 book solutions $(B)/drills.pdf \
	  $(B)/html/index.html $(EMULATED_BINS) \
	  $(if $(CUDA),$(GPU_BINS))

# ------------------------------------------------------------------ deps ----
deps: $(B)/stamp/deps

$(B)/stamp/deps:
	$(call install_missing,$(PACKAGES))
	@mkdir -p $(@D) && touch $@

# Installs those of the Debian packages $(1) that are missing, as root; any
# other user is told the command and the build stops.
define install_missing
	@missing=$$(for p in $(1); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' \
	      || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing: "$$missing; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	      apt-get install -y -qq --no-install-recommends $$missing >/dev/null \
	      || exit 1; \
	  else \
	    echo "make: these Debian packages are missing. Install them, then run make again:"; \
	    echo "  sudo apt-get install --no-install-recommends" $$missing; \
	    exit 1; \
	  fi; \
	fi
endef

# ---------------------------------------------------------------- tangle ----
# Every root chunk names the file it produces, under code/ or figures/. The
# first line of each tangled file names every chapter that contributes to it:
# each chapter that defines a chunk the root reaches through its uses, in
# chapter order. A file is rewritten only when its text changed, so that make
# rebuilds only what depends on it.
tangle: $(B)/stamp/tangled

$(B)/stamp/tangled: $(CHAPTERS)
	@$(MAKE) --no-print-directory tangle-into DEST=.
	@mkdir -p $(@D) && touch $@

# noweb's markup (in the library directory its own scripts name) turns the
# chapters into one line per event: @file starts a chapter, @defn a chunk,
# @use a reference inside it; references quoted in the prose ([[...]]) sit
# between @quote and @endquote and contribute nothing. The awk program below
# prints, for every chunk that no other chunk uses (a root), the root, a tab,
# and its chapters as the header says them: "A", "A and B", "A, B and C".
NOWEB_LIB := $(or $(shell sed -n 's/^LIB=//p' \
                      $$(command -v noroots || echo /dev/null) \
                                  2>/dev/null),/usr/lib/noweb)

define TANGLE_SOURCES
/^@file / { file = substr($0, 7); if (!(file in order)) order[file] = ++files
            chapter[files] = file; next }
/^@quote$/ { quoted = 1; next }
/^@endquote$/ { quoted = 0; next }
quoted { next }
/^@defn / { chunk = substr($0, 7); defines[chunk, order[file]] = 1
            if (!(chunk in known)) { known[chunk] = 1; all[++chunks] = chunk }
            next }
/^@use / { used[substr($0, 6)] = 1; uses[chunk] = uses[chunk] "\n" substr($0, 6)
           next }
/^@end code/ { chunk = "" }
function reach(c,    n, i, list) {
  if (c in seen) return
  seen[c] = 1
  for (i = 1; i <= files; i++) if ((c, i) in defines) from[i] = 1
  n = split(substr(uses[c], 2), list, "\n")
  for (i = 1; i <= n; i++) reach(list[i])
}
END {
  for (k = 1; k <= chunks; k++) {
    root = all[k]
    if (root in used) continue
    split("", seen); split("", from); text = ""; n = 0
    reach(root)
    for (i = 1; i <= files; i++) if (i in from) name[++n] = chapter[i]
    for (i = 1; i <= n; i++)
      text = text (i == 1 ? "" : i == n ? " and " : ", ") name[i]
    printf "%s\t%s\t%d\n", root, text, n
  }
}
endef
export TANGLE_SOURCES := $(value TANGLE_SOURCES)

# The chapters are read into noweb's markup once, and each root is tangled
# from that (notangle -R would read every chapter again for every file); a
# file is copied only when its text changed, as cpif does.
tangle-into:
	@set -eo pipefail; marked=$$(mktemp); \
	trap 'rm -f "$$marked" "$$marked.file"' EXIT; \
	$(NOWEB_LIB)/markup $(CHAPTERS) > "$$marked"; \
	awk "$$TANGLE_SOURCES" "$$marked" | \
	while IFS=$$'\t' read -r root from count; do \
	  case "$$root" in \
	    code/*|figures/*) ;; \
	    *) echo "tangle: root chunk <<$$root>> is not a file under code/ or figures/" >&2; \
	       exit 1 ;; \
	  esac; \
	  what=chapter; [ "$$count" -eq 1 ] || what=chapters; \
	  case "$$root" in \
	    *.c|*.h|*.cu) note="/* Tangled from $$from; edit the $$what, not this file. */" ;; \
	    *)            note="# Tangled from $$from; edit the $$what, not this file." ;; \
	  esac; \
	  mkdir -p "$(DEST)/$${root%/*}"; \
	  { echo "$$note"; $(NOWEB_LIB)/nt -R"$$root" < "$$marked"; } \
	    > "$$marked.file"; \
	  cmp -s "$$marked.file" "$(DEST)/$$root" \
	    || cp "$$marked.file" "$(DEST)/$$root"; \
	done

# -------------------------------------------------------------- programs ----
COMMON_OBJ := $(patsubst code/%.c,$(OBJ)/%.o,$(wildcard code/common/*.c))
FLEET_OBJ := $(patsubst code/%.c,$(OBJ)/%.o,$(wildcard code/fleet/*.c)) $(COMMON_OBJ)
MPICC := mpicc
COMM_OBJ := $(OBJ)/comm/ring.o $(OBJ)/comm/mesh.o

# The trainer is compiled for this machine's own vector units, with a*b + c
# contracted into fused multiply-adds (which -std=c11 alone forbids).
FAST := -O3 -march=native -ffp-contract=fast \
        $(shell $(CC) -mprefer-vector-width=512 -E -x c /dev/null -o /dev/null \
                2>/dev/null && echo -mprefer-vector-width=512)
MINIGPT_OBJ := $(patsubst code/%.c,$(OBJ)/%.o,\
                 $(filter-out code/minigpt/bench.c,$(wildcard code/minigpt/*.c)))
$(MINIGPT_OBJ) $(OBJ)/minigpt/bench.o: CFLAGS += $(FAST)
# The trainer is an MPI program from chapter 7 on: its files see mpi.h.
$(MINIGPT_OBJ) $(OBJ)/minigpt/bench.o: CC := $(MPICC)

BINS := $(B)/bin/fleet $(B)/bin/minigpt $(B)/bin/minigpt-fp64 \
        $(B)/bin/matmul-bench $(B)/bin/allreduce $(B)/bin/machine \
        $(B)/bin/moe $(B)/bin/formats

programs: $(BINS) $(EMULATED_BINS) $(if $(CUDA),$(GPU_BINS))

# Objects depend on the flags they were built with, so SANITIZE=1 rebuilds.
# The stamp is the compiler and its flags (tests read them from it),
# expanded here once (:=) with the values every object shares: a recipe
# expands its variables in the context of the target that first asks for
# its target, and a trainer object's CC and CFLAGS (above) are not a
# planner object's, so the stamp would flip between the two from one build
# to the next and rebuild every program, re-measure the machine and rerun
# every chapter's runs after any edit.
BUILT_WITH := $(CC) $(CFLAGS) $(LDFLAGS)
$(OBJ)/cflags: FORCE
	@mkdir -p $(@D)
	@echo '$(BUILT_WITH)' | cmp -s - $@ || echo '$(BUILT_WITH)' > $@

$(OBJ)/%.o: code/%.c $(OBJ)/cflags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(B)/bin/fleet: $(FLEET_OBJ)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(B)/bin/minigpt: $(MINIGPT_OBJ) $(COMM_OBJ) $(COMMON_OBJ) \
                 $(if $(CUDA),$(OBJ)/cuda/device.o $(OBJ)/cuda/layers.o,\
                   $(OBJ)/cuda/absent.o)
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ $(LDLIBS) $(if $(CUDA),$(CUDA_LIBS)) -o $@

# The same trainer in double precision, for the sharp gradient check.
OBJ64 := $(B)/obj-fp64
MINIGPT64_OBJ := $(patsubst $(OBJ)/%,$(OBJ64)/%,$(MINIGPT_OBJ)) \
                 $(OBJ64)/cuda/absent.o

$(OBJ64)/%.o: code/%.c $(OBJ)/cflags
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(FAST) -DMINIGPT_FP64 -MMD -MP -c $< -o $@

$(B)/bin/minigpt-fp64: $(MINIGPT64_OBJ) $(COMM_OBJ) $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The MPI programs are compiled with MPICH's wrapper, which adds its headers
# and library to the same compiler and flags.

$(OBJ)/comm/%.o: code/comm/%.c $(OBJ)/cflags
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(FAST) -MMD -MP -c $< -o $@

$(B)/bin/allreduce: $(OBJ)/comm/allreduce.o $(COMM_OBJ) $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The measurements of this machine (Appendix "Measuring this machine"): an MPI
# program that links the trainer's FMA loop and gemm rather than copy them.
$(OBJ)/machine/%.o: code/machine/%.c $(OBJ)/cflags
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(FAST) -MMD -MP -c $< -o $@

$(B)/bin/machine: $(OBJ)/machine/machine.o $(OBJ)/minigpt/peak.o \
                  $(OBJ)/minigpt/gemm.o $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The expert-parallel layer (Section "An expert-parallel layer"): an MPI
# program that links the trainer's matrix multiply, layers and random numbers.
$(OBJ)/moe/%.o: code/moe/%.c $(OBJ)/cflags
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(FAST) -MMD -MP -c $< -o $@

$(B)/bin/moe: $(OBJ)/moe/moe.o $(OBJ)/minigpt/gemm.o \
              $(OBJ)/minigpt/layers.o $(OBJ)/minigpt/rng.o $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The number formats (Chapter "Mixed precision, measured"): a tool on the
# header of rounding functions that the trainer and the CUDA kernels share.
$(B)/bin/formats: $(OBJ)/formats/formats.o $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# The labs, exercises/labs/NAME (each one's README.md says what it asks):
# make lab lists them, make lab LAB=NAME grades one (labs.mk). Here the labs
# link the book's objects from this build's own directories, made by the
# rules above; the handout's Makefile builds them from code/ (labs.mk).
LAB_BOOK := $(OBJ)
LAB_BOOK64 := $(OBJ64)
include exercises/labs/labs.mk

# The handout, build/handout.tar.gz: one folder, fleet-labs/, that builds on
# its own: every lab's skeleton, grader and lab.mk, the driver, the book's
# code (code/, which the labs compile) and the exercises' statements (which
# name each lab's chapter), with a Makefile (exercises/labs/handout.mk, the
# book's flags filled in, without the sanitizers) and a README for an
# instructor (exercises/labs/handout.md). No solution is in it.
HANDOUT := $(B)/handout/fleet-labs
HANDOUT_FILES = $(shell find code exercises/labs -type f \
                  ! -name 'handout.m[dk]') $(wildcard exercises/[0-9]*.tex)
HANDOUT_CFLAGS = $(filter-out -fsanitize=% -fno-omit-frame-pointer \
                   -fno-sanitize-recover=%,$(CFLAGS))

handout:
	@rm -rf $(HANDOUT) && mkdir -p $(HANDOUT)
	@cp --parents $(HANDOUT_FILES) $(HANDOUT)/
	@sed -e 's|@CFLAGS@|$(HANDOUT_CFLAGS)|' -e 's|@FAST@|$(FAST)|' \
	  exercises/labs/handout.mk > $(HANDOUT)/Makefile
	@cp exercises/labs/handout.md $(HANDOUT)/README.md
	@tar -czf $(B)/handout.tar.gz -C $(dir $(HANDOUT)) fleet-labs
	@echo "handout: $(B)/handout.tar.gz, $(words $(LABS)) labs: $(LABS)"

# OpenBLAS is only the yardstick of the benchmark; minigpt does not link it.
$(B)/bin/matmul-bench: $(OBJ)/minigpt/bench.o $(OBJ)/minigpt/gemm.o \
                       $(OBJ)/minigpt/peak.o $(OBJ)/minigpt/rng.o $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ -lopenblas $(LDLIBS) -o $@

bench: $(B)/bin/matmul-bench $(B)/bin/fleet $(B)/machine.json
	$(B)/bin/matmul-bench --machine $(B)/machine.json
	@echo "fleet layout: every layout of a 405B model on 16,384 GPUs"
	@time $(B)/bin/fleet layout --layers 126 --hidden 16384 --ffn 53248 \
	  --gated --heads 128 --kv-heads 8 --vocab 128000 --seq 8192 \
	  --batch-tokens 16777216 --gpus 16384 --json > /dev/null

# ------------------------------------------------------------------ CUDA --
# The C files of code/cuda see mpi.h through minigpt.h; the .cu files are
# nvcc's, and see it through gpu.h, from the directories mpicc names
# (MPICH's -show; Open MPI's -showme), without MPI's C++ bindings.
# NCCL's collectives (Appendix "The CUDA backend", "Collectives on the
# device") are compiled where nccl.h is among the toolkit's headers or
# the system's; without it the backend builds and every collective goes
# through host copies. gpu-check-layers links the CPU layers it checks
# against.
NCCL_H := $(if $(CUDA),$(firstword $(wildcard $(CUDA_HOME)/include/nccl.h \
            /usr/include/nccl.h)))
NVCC_MPI := $(if $(CUDA),$(filter -I%,$(shell $(MPICC) -show 2>/dev/null \
              || $(MPICC) -showme 2>/dev/null)) -DMPICH_SKIP_MPICXX \
              -DOMPI_SKIP_MPICXX $(if $(NCCL_H),-DGPU_NCCL))
$(OBJ)/cuda/%.o: code/cuda/%.c $(OBJ)/cflags
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OBJ)/cuda/%.o: code/cuda/%.cu code/cuda/gpu.h code/minigpt/elementwise.h \
                 code/minigpt/number_formats.h
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) $(NVCC_MPI) -c $< -o $@

$(B)/bin/gpu-check-layers: $(OBJ)/cuda/check-layers.o $(OBJ)/cuda/layers.o \
                           $(filter-out $(OBJ)/minigpt/main.o,$(MINIGPT_OBJ)) \
                           $(COMM_OBJ) $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ $(LDLIBS) $(CUDA_LIBS) -o $@

$(B)/bin/gpu-gemm-bench: $(OBJ)/cuda/gemm-bench.o $(OBJ)/cuda/bench.o \
                         $(OBJ)/cuda/layers.o \
                         $(filter-out $(OBJ)/fleet/main.o,$(FLEET_OBJ))
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ $(LDLIBS) $(CUDA_LIBS) -o $@

# The GPU model's code (device.c) on the CPU's layers, in every build.
$(B)/bin/minigpt-emulated: $(MINIGPT_OBJ) $(COMM_OBJ) $(COMMON_OBJ) \
                           $(OBJ)/cuda/device.o $(OBJ)/cuda/emulated.o
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# gpu-check-layers on the emulated backend: the check program's own code
# (every layer against itself), in every build.
$(B)/bin/gpu-check-layers-emulated: $(OBJ)/cuda/check-layers.o \
                                    $(OBJ)/cuda/emulated.o \
                           $(filter-out $(OBJ)/minigpt/main.o,$(MINIGPT_OBJ)) \
                           $(COMM_OBJ) $(COMMON_OBJ)
	@mkdir -p $(@D)
	$(MPICC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Every GPU test and benchmark, with a log and CSV files in GPU_OUT.
# The tangled code is committed, so a GPU machine needs neither noweb nor the
# book's packages: only a compiler, MPI and CUDA.
gpu-check:
	@if [ -z "$(CUDA)" ]; then \
	  echo "gpu-check: $(if $(NVCC),nvcc is $(NVCC) but libcublas and libcudart were not found under $(CUDA_HOME)/lib64,nvcc was not found): this build has no CUDA backend"; \
	  exit 2; fi
	@if command -v notangle > /dev/null; then \
	  $(MAKE) --no-print-directory tangle; fi
	@$(MAKE) --no-print-directory -j$$(nproc) $(GPU_BINS) $(B)/bin/minigpt
	@sh code/cuda/gpu-check.sh $(B) $(GPU_OUT)

-include $(FLEET_OBJ:.o=.d) $(MINIGPT_OBJ:.o=.d) $(MINIGPT64_OBJ:.o=.d) \
         $(OBJ)/minigpt/bench.d $(wildcard $(OBJ)/comm/*.d) \
         $(wildcard $(OBJ)/machine/*.d) $(wildcard $(OBJ)/cuda/*.d) \
         $(wildcard $(OBJ)/moe/*.d) $(wildcard $(OBJ)/formats/*.d)

# --------------------------------------------------------------- machine ----
# The machine is measured once per build, before any chapter's run, into one
# file that every program needing its figures reads (--machine). Two ranks,
# each pinned to a core of its own where there are two cores to pin to.
MACHINE_BIND := $(shell [ "$$(nproc)" -ge 2 ] 2>/dev/null && echo -bind-to core)

$(B)/machine.json: $(B)/bin/machine
	@mkdir -p $(B)/numbers $(B)/transcripts
	@echo "measure this machine: mpiexec -n 2 $(MACHINE_BIND) $<"
	@mpiexec -n 2 $(MACHINE_BIND) $< --output $@ --latex Machine \
	  --latex-output $(B)/numbers/machine.tex \
	  --transcript $(B)/transcripts/machine.txt

# ------------------------------------------------------------------ runs ----
# Each chapter's runs are a script tangled from the chapter itself, so the
# book shows the exact commands whose output it includes.
RUN_SCRIPTS := $(wildcard code/runs/*.sh)
RUN_STAMPS := $(patsubst code/runs/%.sh,$(B)/stamp/run-%,$(RUN_SCRIPTS))

runs: $(RUN_STAMPS)

# A script waits only for the programs it names, so that changing the planner
# does not re-run the trainer's measurements.
programs_for = $(addprefix $(B)/bin/,$(sort $(shell grep -owE \
                 'fleet|minigpt|minigpt-fp64|allreduce|matmul-bench|moe' $(1))))
# ... and for the machine's figures, if it reads them.
machine_for = $(if $(shell grep -l 'machine\.json' $(1)),$(B)/machine.json)
# ... and for the formats tool (its name is also formats.awk's).
formats_for = $(if $(shell grep -l 'bin/formats' $(1)),$(B)/bin/formats)
# ... and for its chapter's run, if it reuses that run's output.
chapter_run_for = $(if $(shell grep -lE '/(numbers|transcripts|data)/' $(1)),\
                    $(filter $(RUN_STAMPS),$(B)/stamp/run-$(2)))

.SECONDEXPANSION:
$(B)/stamp/run-%: code/runs/%.sh code/common/formats.awk \
                  $$(call programs_for,code/runs/$$*.sh) \
                  $$(call machine_for,code/runs/$$*.sh) \
                  $$(call formats_for,code/runs/$$*.sh)
	@mkdir -p $(B)/transcripts $(B)/numbers $(B)/data $(@D)
	@echo "run  $<"
	@start=$$(date +%s); sh $< $(B) && \
	 echo "     $< took $$(( $$(date +%s) - start )) s"
	@touch $@

# --------------------------------------------------------------- figures ----
# Each figure script plots CSV that the runs wrote into build/data; the text of
# a figure is typeset by LaTeX in the book's fonts (cairolatex).
FIGURE_SCRIPTS := $(wildcard figures/*.gp)
FIGURES := $(patsubst figures/%.gp,$(B)/figures/%.tex,$(FIGURE_SCRIPTS))

figures: $(FIGURES)

$(B)/figures/%.tex: figures/%.gp $(RUN_STAMPS)
	@mkdir -p $(@D)
	@echo "plot $<"
	@gnuplot -e "data='$(B)/data'" \
	  -e "set terminal cairolatex pdf input size 12cm,7cm font ',9'" \
	  -e "set output '$@'" $<

# ------------------------------------------------------------------ book ----
# All chapters are woven in one run so that chunk cross-references and the
# identifier index span the whole book. The index lists what the chapters
# declare with @ %def, not every local variable. It is noweave -n -index with
# one filter between finduses, which marks every word that is an indexed name
# as a use, and noidx, which counts the uses: the filter keeps only the uses
# in C code, so that an identifier is not linked from a comment, a string, a
# struct member of the same name (after . or ->), or a shell, awk or gnuplot
# script. tests/00-index.t checks what is left.
define INDEX_USES
{ line[++lines] = $0 }
/^@begin code/ { code = 1 }
/^@end code/ { code = 0 }
/^@quote$/ { quoted = 1 }
/^@endquote$/ { quoted = 0 }
code && /^@defn / { chunk = substr($0, 7); defined[chunk] = 1 }
code && !quoted && /^@use / { used[substr($0, 6)] = 1
                              uses[chunk] = uses[chunk] "\n" substr($0, 6) }
function reach(c,    n, i, list) {
  if (c in c_chunk) return
  c_chunk[c] = 1
  n = split(substr(uses[c], 2), list, "\n")
  for (i = 1; i <= n; i++) reach(list[i])
}
function scan(s,    i, ch, next_ch) {
  for (i = 1; i <= length(s); i++) {
    ch = substr(s, i, 1); next_ch = substr(s, i + 1, 1)
    if (state == "comment") { if (ch == "*" && next_ch == "/") { state = ""; i++ } }
    else if (state == "line comment") { }
    else if (state == "string" || state == "char") {
      if (ch == "\\") i++
      else if (ch == (state == "string" ? "\"" : "'")) state = ""
    }
    else if (ch == "/" && next_ch == "*") { state = "comment"; i++ }
    else if (ch == "/" && next_ch == "/") state = "line comment"
    else if (ch == "\"") state = "string"
    else if (ch == "'") state = "char"
  }
  before = before s
}
END {
  for (c in defined) if (!(c in used) && c ~ /\.(c|h|cu)$/) reach(c)
  code = 0
  for (i = 1; i <= lines; i++) {
    l = line[i]
    if (l ~ /^@begin code/) { code = 1; state = ""; before = "" }
    else if (l ~ /^@end code/) code = 0
    else if (!code) { }
    else if (l ~ /^@defn /) is_c = substr(l, 7) in c_chunk
    else if (l ~ /^@nl/) { before = ""; if (state != "comment") state = "" }
    else if (l ~ /^@text /) scan(substr(l, 7))
    else if (l ~ /^@index use / && (!is_c || state != "" || before ~ /(\.|->)[ \t]*$/))
      continue
    print l
  }
}
endef
export INDEX_USES := $(value INDEX_USES)

# The woven chapters as noweb's markup, uses filtered: what noidx reads
# (INDEX_FILTER=cat shows what finduses alone marks).
INDEX_FILTER = awk "$$INDEX_USES"
INDEX_STREAM = $(NOWEB_LIB)/markup $(CHAPTERS) | $(NOWEB_LIB)/finduses | \
               $(INDEX_FILTER)
index-stream:
	@set -o pipefail; $(INDEX_STREAM)

$(B)/tex/chapters.tex: $(CHAPTERS)
	@mkdir -p $(@D)
	@echo "weave $@"
	@set -o pipefail; $(INDEX_STREAM) | $(NOWEB_LIB)/noidx | $(NOWEB_LIB)/totex > $@

# pdflatex runs until the cross-references settle (at most four times): until
# its log asks for no rerun. (The log always names the rerunfilecheck package,
# which hyperref loads; that package's own request ends "Rerun to get
# outlines right".)
define latex
	@mkdir -p $(B)/tex
	@for pass in 1 2 3 4; do \
	  pdflatex -interaction=nonstopmode -halt-on-error \
	    -output-directory $(B)/tex $(1) > $(B)/tex/$(2).stdout 2>&1 \
	    || { tail -n 30 $(B)/tex/$(2).log; exit 1; }; \
	  grep -q 'Rerun to get\|Label(s) may have changed' \
	    $(B)/tex/$(2).log || break; \
	done
	@cp $(B)/tex/$(2).pdf $@
	@echo "wove $@"
endef

book: $(B)/book.pdf

$(B)/book.pdf: chapters/book.tex chapters/preamble.tex chapters/bibliography.tex \
               $(B)/tex/chapters.tex $(B)/machine.json $(RUN_STAMPS) $(FIGURES) \
               $(wildcard exercises/*.tex)
	$(call latex,chapters/book.tex,book)
	@# The book's text as the tests read it (FleetTest::pdf_text), extracted
	@# once here rather than by every test that reads the book.
	@pdftotext -layout -enc UTF-8 $@ $(B)/book.txt

# ------------------------------------------------------------- solutions ----
SOLUTION_SCRIPTS := $(wildcard solutions/*.sh)
SOLUTION_STAMPS := $(patsubst solutions/%.sh,$(B)/stamp/solution-%,$(SOLUTION_SCRIPTS))

solutions: $(B)/solutions.pdf

$(B)/stamp/solution-%: solutions/%.sh solutions/lib/helpers.sh \
                       code/common/formats.awk \
                       $$(call programs_for,solutions/$$*.sh) \
                       $$(call formats_for,solutions/$$*.sh) \
                       $$(call machine_for,solutions/$$*.sh) \
                       $$(call chapter_run_for,solutions/$$*.sh,$$*)
	@mkdir -p $(B)/solutions $(@D)
	@echo "run  $<"
	@start=$$(date +%s); sh $< $(B) && \
	 echo "     $< took $$(( $$(date +%s) - start )) s"
	@touch $@

$(B)/solutions.pdf: solutions/solutions.tex chapters/preamble.tex chapters/bibliography.tex \
                    $(wildcard solutions/[0-9]*.tex) $(SOLUTION_STAMPS) \
                    $(wildcard exercises/*.tex)
	$(call latex,solutions/solutions.tex,solutions)

# ----------------------------------------------------------------- timed ----
# The scripts that share the machine: they time nothing (no time, rate or
# ratio of times they measure reaches the book, its solutions or a figure:
# the planner's models, and the precision exercises' losses) and start no
# ranks (MPICH's waiting ranks poll, and would take the cores from whatever
# ran beside them). They run two at a time, with the figures, the weaving
# and LaTeX (all's last phase); every other run and solution, named here or
# new, runs alone, first (make timed).
SHARED := $(addprefix $(B)/stamp/run-,01-memory-floor 02-compute-and-fleet \
            03-step 04-activations 05-layout 11-drill 11-predicted \
            13-checkpoint 13-drill 14-drill 14-moe) \
          $(addprefix $(B)/stamp/solution-,01-memory-floor \
            02-compute-and-fleet 03-step 04-activations 05-layout \
            12-precision)

timed: $(B)/machine.json $(filter-out $(SHARED),$(RUN_STAMPS) $(SOLUTION_STAMPS))

# ---------------------------------------------------------------- drills ----
# The drill sheet: a card a chapter (drills/NN-*.tex), its numbers the book's
# own macros from the runs.
$(B)/drills.pdf: drills/drills.tex chapters/preamble.tex \
                 $(wildcard drills/[0-9]*.tex) $(RUN_STAMPS)
	$(call latex,drills/drills.tex,drills)

# ------------------------------------------------------------------ html ----
# make weaves the HTML edition too, build/html/ (index.html first), beside
# the PDF in its last phase (make html is a name for the same), from the
# same LaTeX, numbers and figure scripts as the book: tex4ht (Debian's
# texlive-plain-generic) runs latex itself on chapters/book.tex, so the book's
# own macros, its numbers (build/numbers/*.tex), its \ref's and noweb's
# cross-references of chunks and identifiers come out as they do in the PDF;
# it cuts the book into one page per chapter, part and appendix, with
# previous, next and contents links, and writes the mathematics as MathML,
# which the browser sets itself: no script, nothing fetched. pandoc and hevea
# read LaTeX without running it, and so neither the run scripts' macros nor
# noweb's output, and MathJax would add a script to every page. dvisvgm draws
# the TikZ pictures as SVG; the plotted figures are the same gnuplot scripts,
# drawn on the same data by the svg terminal (tools/html/svg-figure.pl turns
# their LaTeX labels into plain text). tests/00-html.t reads every page in a
# headless Chromium, which `make browser` installs.
HTML_PACKAGES := texlive-plain-generic dvisvgm
BROWSER_PACKAGES := chromium
HTML_FIGURES := $(patsubst figures/%.gp,$(B)/html/figures/%.svg,$(FIGURE_SCRIPTS))

.PHONY: html browser

html: all

browser: $(B)/stamp/deps-browser

$(B)/stamp/deps-html:
	$(call install_missing,$(HTML_PACKAGES))
	@mkdir -p $(@D) && touch $@

# A browser is installed only for the tests that read the HTML edition, so
# that it is asked for by name; where it is missing and cannot be installed,
# those tests say why and skip.
$(B)/stamp/deps-browser:
	$(call install_missing,$(BROWSER_PACKAGES))
	@mkdir -p $(@D) && touch $@

$(B)/html/figures/%.svg: figures/%.gp tools/html/svg-figure.pl $(RUN_STAMPS)
	@mkdir -p $(@D)
	@echo "plot $< (svg)"
	@mkdir -p $(B)/html-gp
	@perl tools/html/svg-figure.pl $< > $(B)/html-gp/$*.gp
	@gnuplot -e "data='$(B)/data'" -e "set terminal svg size \
	  $$(sed -n '1s/^# size //p' $(B)/html-gp/$*.gp) font 'sans,13' \
	  noenhanced background '#ffffff'" -e "set output '$@'" $(B)/html-gp/$*.gp

$(B)/html/index.html: chapters/book.tex chapters/preamble.tex \
                      chapters/bibliography.tex $(B)/tex/chapters.tex \
                      $(B)/machine.json $(RUN_STAMPS) $(HTML_FIGURES) \
                      $(wildcard exercises/*.tex) $(wildcard tools/html/*) \
                      $(B)/stamp/deps-html
	@echo "weave $(B)/html"
	@bash tools/html/build.sh $(B)
	@echo "wove $@"

# ------------------------------------------------------------------ test ----
# Two test files at a time (TEST_JOBS): most of them run one process, and
# those that run MPI ranks check results, never speed. The longest start
# first, so that the two jobs end together; those that run several ranks
# alternate with those that run one, since two runs of several ranks take
# turns (FleetTest's mpi_turn: MPICH's waiting ranks poll, and two runs
# that outnumber the cores together starve each other's ranks). --timer
# prints each file's time, so that a slow one shows in the log.
TEST_JOBS ?= 2
SLOW_TESTS := $(wildcard tests/00-labs.t tests/00-html.t \
                tests/07-allreduce.t tests/06-reference-input.t \
                tests/08-sharded-state.t tests/06-solutions.t \
                tests/09-tensor-parallel.t tests/10-figures.t \
                tests/11-mesh.t tests/00-tangle.t \
                tests/10-lab.t tests/10-schedule.t \
                tests/11-hierarchical.t tests/00-help.t \
                tests/09-lab.t tests/11-solutions.t \
                tests/11-buckets.t tests/07-solutions.t \
                tests/10-trace.t tests/09-cuda.t \
                tests/09-cuda-nccl.t tests/09-cuda-tp.t)

test: all
	@prove --timer -j$(TEST_JOBS) $(SLOW_TESTS) \
	  $(filter-out $(SLOW_TESTS),$(wildcard tests/*.t))

# AddressSanitizer and UndefinedBehaviorSanitizer on the programs' own tests,
# without re-measuring the book with sanitized (and so much slower) programs.
# A plain `make` afterwards rebuilds the programs without them. The tests
# that read the woven book, its solutions or the numbers the book's runs
# wrote are left out: those files are not rewritten here.
SANITIZE_TESTS := $(filter-out tests/00-book.t tests/00-times.t \
                    tests/00-drills.t $(wildcard tests/*-solutions*.t),\
                    $(wildcard tests/*.t))

check-sanitize:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory tangle
	@$(MAKE) --no-print-directory programs SANITIZE=1
	@prove $(SANITIZE_TESTS)

info:
	@echo "chapters: $(CHAPTERS)"
	@echo "CUDA:     $(if $(CUDA),toolkit $(CUDA) (the CUDA backend is built),$(if $(NVCC),nvcc $(NVCC) without libcublas/libcudart (CPU only),not found (CPU only)))"
	@$(if $(CUDA),echo "NCCL:     $(if $(NCCL_H),$(NCCL_H) (the device collectives are built),nccl.h not found (collectives through host copies))",true)

# What the build decided about CUDA, for tests/09-cuda.t: the toolkit's
# directory when the backend is built, and nvcc when it was found.
cuda-backend:
	@echo "CUDA=$(CUDA)"
	@echo "NVCC=$(NVCC)"
	@echo "NCCL=$(NCCL_H)"

clean:
	rm -rf $(B)
