import os

# Tests run the simulator even on a machine with a GPU unless asked otherwise.
os.environ.setdefault("COURSE_LIB_BACKEND", "sim")
