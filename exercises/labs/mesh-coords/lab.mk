# exercises/labs/mesh-coords/lab.mk: the mesh lab (Chapter 11). The
# student's mesh_coords.c, from $(LAB_WORK), with the autograder and the
# book's mesh_init, compiled from code/comm/mesh.c into $(LAB_OUT) (kept
# there, and compiled again when a source is newer). One process: the
# grader answers mesh_init's MPI calls itself.
LAB_FILES_mesh-coords := mesh_coords.c
LAB_BOOK_mesh-coords := code/comm/mesh.c
LAB_FLAGS_mesh-coords = $(CFLAGS) -Iexercises/labs/common \
    -Iexercises/labs/mesh-coords -Icode/comm -Icode/common

lab-grade-mesh-coords:
	@mkdir -p $(LAB_OUT)
	@for f in $(LAB_BOOK_mesh-coords); do \
	  o=$(LAB_OUT)/book-$$(basename $$f .c).o; \
	  if [ ! -f $$o ] || [ -n "$$(find $$f code/*/*.h -newer $$o)" ]; \
	  then $(MPICC) $(LAB_FLAGS_mesh-coords) -c $$f -o $$o || exit 1; fi; \
	done
	@$(MPICC) $(LAB_FLAGS_mesh-coords) -c $(LAB_WORK)/mesh_coords.c \
	  -o $(LAB_OUT)/mesh_coords.o
	@$(MPICC) $(LAB_FLAGS_mesh-coords) -c exercises/labs/mesh-coords/grade.c \
	  -o $(LAB_OUT)/grade.o
	@$(MPICC) $(CFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/mesh_coords.o \
	  $(addprefix $(LAB_OUT)/book-,$(notdir $(LAB_BOOK_mesh-coords:.c=.o))) \
	  $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade
