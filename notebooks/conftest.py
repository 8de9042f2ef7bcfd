"""nbval compares the outputs stored from the CPU simulator; run the notebooks on it here too,
even on a GPU machine (to run them on the GPU: COURSE_LIB_BACKEND=gpu pytest --nbval-lax notebooks)."""
import os

os.environ.setdefault("COURSE_LIB_BACKEND", "sim")
# the stored outputs hold no progress bar; on a loaded machine a simulation may pass the bar's 2 s delay
os.environ.setdefault("COURSE_LIB_PROGRESS", "0")
