# The course in a Linux container: for machines NVIDIA's compiler library (NVRTC) has no build for
# (macOS), or to keep the course apart from your own Python. No GPU reaches it: kernels run in the
# course's simulator, which needs only NVRTC's PTX.
#
#   course-lab --container          # builds this image when needed and runs it (course_lib/container.py)
#
# or by hand, from the checkout (your notebooks stay on your machine, in my-notebooks/):
#   docker build -t transpose-course .
#   docker run --rm -p 127.0.0.1:8888:8888 -v "$PWD:/course" transpose-course
#
# The same image serves VS Code's and Codespaces' dev containers (.devcontainer/devcontainer.json).
# tests/test_install.py runs these steps as a shell script on a Debian machine (COURSE and VENV
# moved to a temporary folder), so keep every step a plain command.
FROM python:3.12-slim-bookworm

ARG COURSE=/course
ARG VENV=/opt/venv
ENV PATH="${VENV}/bin:${PATH}" \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

WORKDIR ${COURSE}
COPY . ${COURSE}
# no exercise solution in an image: .dockerignore leaves them out, and should one come in anyway (a context
# without that .dockerignore) the build stops here, naming it (INSTRUCTOR_ONLY, course_lib/lab/instructor/publish.py)
RUN if find "${COURSE}" \( -path "*/exercises/*/solution.cu" -o -path "*/exercises/*/hidden.*" -o -path "*/exercises/*/wrong.toml" -o -path "*/kernels/solutions/*" \) -print | grep .; then echo "this image would hold the exercise solutions above: build it from the student repository (python -m course_lib instructor publish), whose .dockerignore leaves them out" >&2; exit 1; fi
RUN python -m venv "${VENV}"
# a new shell, so `python` is the venv's (a shell remembers where it found a command). An editable
# install: a checkout mounted over /course at run time is what the kernels import.
RUN pip install -q -e ".[lab]" && python -c "import course_lib.compile.nvrtc as n; print('NVRTC', n.nvrtc_version())"

EXPOSE 8888
CMD ["course-lab", "--no-browser", "--ip", "0.0.0.0", "--port", "8888"]
