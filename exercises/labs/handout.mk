# The Makefile of the labs' handout, written by the book's `make handout`
# (from exercises/labs/handout.mk, with the book's compiler flags filled
# in). It needs gcc, make and MPICH (mpicc, mpiexec), nothing else:
#
#   make                        list the labs: name, chapter, title
#   make lab LAB=NAME           grade your copy of lab NAME, labs/NAME/,
#                               made from the skeleton the first time
#   make lab LAB=NAME WORK=DIR  grade the lab's files in DIR instead
#   make clean                  remove build/ (your copies stay)
#
# exercises/labs/labs.mk is the driver; README.md says more.
SHELL := /bin/bash
CC := gcc
MPICC := mpicc
CFLAGS := @CFLAGS@
FAST := @FAST@
LDLIBS := -lm

.DEFAULT_GOAL := lab
.PHONY: clean

include exercises/labs/labs.mk

clean:
	rm -rf build
