"""What a student runs: course-lab and its JupyterLab, the work copy of the notebooks, the container for
macOS, and the hub pull's merge driver. Imports nothing of lab/instructor or lab/grader."""
