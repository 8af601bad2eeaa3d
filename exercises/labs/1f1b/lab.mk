# exercises/labs/1f1b/lab.mk: the lab of chapter 10, the 1F1B order of a
# pipeline stage's operations. The student's order_1f1b goes in place of
# the chapter's 1F1B order: the schedule module is compiled with its
# pipeline_order renamed, and the lab's pipeline_order (lab_order.c) sends
# SCHEDULE_1F1B to the student's function and every other schedule to the
# chapter's. grade.sh checks the order on a grid of pipelines (grade.c),
# then trains the trainer built with it on 2 and 4 stages with --verify.
LAB_FILES_1f1b := one_f_one_b.c

LAB_1F1B_COMMON := $(patsubst code/%.c,$(LAB_BOOK)/%.o,\
  $(filter-out code/common/pipeline_schedule.c,$(wildcard code/common/*.c)))
LAB_1F1B_BOOK := \
  $(patsubst code/%.c,$(LAB_BOOK)/%.o,$(filter-out code/minigpt/bench.c,\
    $(wildcard code/minigpt/*.c))) \
  $(LAB_BOOK)/comm/ring.o $(LAB_BOOK)/comm/mesh.o $(LAB_BOOK)/cuda/absent.o
LAB_1F1B_FLAGS = $(CFLAGS) -Icode/common -Iexercises/labs/1f1b

lab-grade-1f1b: $(LAB_1F1B_BOOK) $(LAB_1F1B_COMMON)
	@mkdir -p $(LAB_OUT)
	$(CC) $(LAB_1F1B_FLAGS) -c $(LAB_WORK)/one_f_one_b.c \
	  -o $(LAB_OUT)/student.o
	$(CC) $(LAB_1F1B_FLAGS) -Dpipeline_order=chapter_pipeline_order \
	  -c code/common/pipeline_schedule.c -o $(LAB_OUT)/schedule.o
	$(CC) $(LAB_1F1B_FLAGS) -c exercises/labs/1f1b/lab_order.c \
	  -o $(LAB_OUT)/lab_order.o
	$(CC) $(LAB_1F1B_FLAGS) -c exercises/labs/1f1b/grade.c \
	  -o $(LAB_OUT)/grade.o
	$(CC) $(LDFLAGS) $(addprefix $(LAB_OUT)/,grade.o student.o \
	  lab_order.o schedule.o) $(LAB_1F1B_COMMON) $(LDLIBS) \
	  -o $(LAB_OUT)/grade
	$(MPICC) $(LDFLAGS) $(addprefix $(LAB_OUT)/,student.o lab_order.o \
	  schedule.o) $^ $(LDLIBS) -o $(LAB_OUT)/minigpt-lab
	@sh exercises/labs/1f1b/grade.sh $(LAB_OUT)
