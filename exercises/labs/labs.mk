# exercises/labs/labs.mk: the labs' driver, included by the book's Makefile
# and by the handout's (`make handout`). Every directory exercises/labs/NAME
# that holds a lab.mk is a lab:
#
#   make lab                   list the labs: name, chapter, title
#   make lab LAB=NAME          grade your copy of the lab, labs/NAME/, made
#                              from the skeleton exercises/labs/NAME/ the
#                              first time
#   make lab LAB=NAME WORK=DIR grade the lab's files in DIR instead (the
#                              model solution: WORK=solutions/labs/NAME; the
#                              untouched skeleton: WORK=exercises/labs/NAME)
#   make lab-NAME              the same as make lab LAB=NAME
#
# Grading runs the lab's own rule, lab-grade-NAME (its lab.mk), with
# LAB_WORK, the directory of the student's files, and LAB_OUT, a build
# directory (build/lab/NAME; LAB_OUT=DIR overrides it). The rule builds the
# student's files with the lab's grader and runs it; the grader prints a
# line "  PASS  ..." or "  FAIL  ..." per check, then "score: k/n". The
# driver then says what did not pass and "lab NAME: k of n checks passed",
# and fails unless all did. A lab.mk may use CC, MPICC, CFLAGS, FAST,
# LDFLAGS, LDLIBS, LAB_WORK, LAB_OUT, and the book's objects compiled from
# code/: $(LAB_BOOK)/DIR/FILE.o from code/DIR/FILE.c, and
# $(LAB_BOOK64)/minigpt/FILE.o in double precision (-DMINIGPT_FP64). The
# book's Makefile sets LAB_BOOK and LAB_BOOK64 to its own object
# directories and builds them by its own rules; the handout's leaves them
# to the rules below.

LABS := $(sort $(patsubst exercises/labs/%/lab.mk,%,\
          $(wildcard exercises/labs/*/lab.mk)))

ifndef LAB_BOOK
LAB_BOOK := build/obj
LAB_BOOK64 := build/obj-fp64

$(LAB_BOOK)/%.o: code/%.c
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(FAST) -MMD -MP -c $< -o $@

$(LAB_BOOK64)/%.o: code/%.c
	@mkdir -p $(@D)
	$(MPICC) $(CFLAGS) $(FAST) -DMINIGPT_FP64 -MMD -MP -c $< -o $@

-include $(wildcard $(LAB_BOOK)/*/*.d $(LAB_BOOK64)/*/*.d)
endif

include $(LABS:%=exercises/labs/%/lab.mk)

.PHONY: lab $(LABS:%=lab-%) $(LABS:%=lab-grade-%)

# The student's copy: WORK from the command line, or labs/NAME.
LAB_COPY = $(if $(filter command line,$(origin WORK)),$(WORK),labs/$(LAB))
LAB_OUT ?= build/lab/$(LAB)

# The chapter of lab $$n: the exercises file that names `LAB=n`.
define lab_chapter
$$(grep -lE "LAB=$$n([^A-Za-z0-9_-]|$$)" exercises/[0-9]*.tex 2>/dev/null \
   | sed -n '1s|.*/0*\([0-9][0-9]*\)-.*|\1|p')
endef

ifeq ($(LAB),)
lab:
	@echo "The labs (make lab LAB=NAME grades your copy, labs/NAME/):"
	@for n in $(LABS); do \
	  title=$$(sed -n '1s/^# Lab: //p' exercises/labs/$$n/README.md); \
	  chapter=$(lab_chapter); \
	  printf '  %-14s chapter %-3s %s\n' "$$n" "$${chapter:--}" "$$title"; \
	done
else ifeq ($(filter $(LAB),$(LABS)),)
lab:
	@echo "make lab: there is no lab '$(LAB)'; the labs are: $(LABS)" >&2; \
	 exit 2
else
lab:
	@set -u; work='$(LAB_COPY)'; out='$(LAB_OUT)'; lab='$(LAB)'; \
	if [ ! -d "$$work" ]; then \
	  if [ '$(origin WORK)' = 'command line' ]; then \
	    echo "make lab: WORK=$$work is not a directory" >&2; exit 2; \
	  fi; \
	  mkdir -p "$$work" && \
	  cp $(addprefix exercises/labs/$(LAB)/,$(LAB_FILES_$(LAB))) "$$work/" \
	    || exit 2; \
	  echo "lab $$lab: made your copy, $$work/, from the skeleton" \
	       "exercises/labs/$$lab/; edit $(LAB_FILES_$(LAB)) there"; \
	fi; \
	for f in $(LAB_FILES_$(LAB)); do \
	  [ -f "$$work/$$f" ] || { echo "make lab: $$work/$$f is missing" \
	    "(lab $$lab grades $(LAB_FILES_$(LAB)))" >&2; exit 2; }; \
	done; \
	mkdir -p "$$out"; \
	$(MAKE) --no-print-directory lab-grade-$$lab LAB_WORK="$$work" \
	  LAB_OUT="$$out" | tee "$$out/grade.txt"; status=$${PIPESTATUS[0]}; \
	score=$$(sed -n 's|^score: \([0-9][0-9]*/[0-9][0-9]*\)$$|\1|p' \
	           "$$out/grade.txt" | tail -n 1); \
	if [ -z "$$score" ]; then \
	  if grep -qE '^  (PASS|FAIL)  ' "$$out/grade.txt"; then \
	    echo "lab $$lab: the grader stopped before its score" \
	         "(status $$status); 0 checks passed"; \
	  else \
	    echo "lab $$lab: it did not build (the messages are above);" \
	         "0 checks passed"; \
	  fi; \
	  exit 1; \
	fi; \
	passed=$${score%/*}; checks=$${score#*/}; \
	if grep -q '^  FAIL  ' "$$out/grade.txt"; then \
	  echo "lab $$lab: did not pass:"; grep '^  FAIL  ' "$$out/grade.txt"; \
	fi; \
	echo "lab $$lab: $$passed of $$checks checks passed"; \
	[ "$$status" -eq 0 ] && [ "$$checks" -gt 0 ] \
	  && [ "$$passed" -eq "$$checks" ]
endif

# make lab-NAME: make lab LAB=NAME. LAB= names a lab now; a student's file
# goes in through WORK=DIR, the directory that holds it.
$(LABS:%=lab-%): lab-%:
	@case '$(filter command line,$(origin LAB))$(LAB)' in \
	  'command line'*.c) echo "make $@: LAB= names a lab now; put" \
	    "your file in a directory and give WORK=DIR" >&2; exit 2;; \
	esac
	@$(MAKE) --no-print-directory lab LAB=$*
