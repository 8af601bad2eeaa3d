# exercises/labs/mesh-coords/lab.mk: the mesh lab (Chapter 11). The
# student's mesh_coords.c, from $(LAB_WORK), with the autograder and the
# book's mesh_init (code/comm/mesh.c). One process, no mpiexec: the grader
# answers mesh_init's MPI calls itself.
# The book's objects are $(LAB_BOOK)'s (exercises/labs/labs.mk).
LAB_FILES_mesh-coords := mesh_coords.c
LAB_BOOK_mesh-coords := $(LAB_BOOK)/comm/mesh.o
LAB_FLAGS_mesh-coords = $(CFLAGS) -Iexercises/labs/common \
    -Iexercises/labs/mesh-coords -Icode/comm -Icode/common

lab-grade-mesh-coords: $(LAB_BOOK_mesh-coords)
	@mkdir -p $(LAB_OUT)
	$(MPICC) $(LAB_FLAGS_mesh-coords) -c $(LAB_WORK)/mesh_coords.c \
	  -o $(LAB_OUT)/mesh_coords.o
	$(MPICC) $(LAB_FLAGS_mesh-coords) -c exercises/labs/mesh-coords/grade.c \
	  -o $(LAB_OUT)/grade.o
	$(MPICC) $(CFLAGS) $(LDFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/mesh_coords.o \
	  $(LAB_BOOK_mesh-coords) $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade
