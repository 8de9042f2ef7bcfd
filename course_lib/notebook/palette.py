"""The course's colours, one meaning each, and the check that they survive colour-vision deficiency.

The colours are Okabe and Ito's colour-blind-safe set (jfly.uni-koeln.de/color): the pairs the
course puts side by side (ideal vs not ideal, the subject vs its context) stay apart for viewers
with protanopia, deuteranopia and tritanopia. :func:`simulate` applies Machado, Oliveira and
Fernandes's 2009 matrices (severity 1.0) to a colour and :func:`distance` measures two colours in
CIELAB (CIE76 delta E), so a test can hold every figure's categories apart. Colour never carries
a meaning alone: the figures also write numbers on their marks, use marker shapes, line dashes and
hatching (course_lib.notebook.draw), and each has a text alternative (course_lib.notebook.alt).
This module draws nothing.
"""
from __future__ import annotations

import re

import numpy as np

# Okabe-Ito: blue, vermillion, bluish green, sky blue, orange, reddish purple, yellow, black
BLUE, VERMILLION, GREEN, SKY, ORANGE, PURPLE, YELLOW, BLACK = (
    "#0072B2", "#D55E00", "#009E73", "#56B4E9", "#E69F00", "#CC79A7", "#F0E442", "#000000")
OK, BAD, MAIN, PALE = GREEN, VERMILLION, BLUE, SKY     # ideal, not ideal, the subject, context
SERIES = [BLUE, VERMILLION, GREEN, ORANGE, PURPLE, SKY, BLACK]   # line and bar series, in order
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot", "solid"]
SYMBOLS = ["circle", "square", "diamond", "triangle-up", "x", "star", "cross"]
CATEGORIES = [BLUE, GREEN, ORANGE, PURPLE, VERMILLION, SKY, YELLOW, BLACK]   # many groups (rows, warps)

# Machado et al. 2009, severity 1.0, on linear RGB
CVD = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}
MIN_DELTA_E = 20.0      # categories of one figure stay at least this far apart, in every vision


def rgb(color: str) -> np.ndarray:
    """sRGB in 0..1 of '#rrggbb', '#rgb' or 'rgb(r, g, b)'."""
    c = color.strip().lower()
    m = re.fullmatch(r"rgba?\(\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)", c.split(")")[0])
    if m:
        return np.array([float(v) for v in m.groups()]) / 255
    h = c.lstrip("#")
    if len(h) == 3:
        h = "".join(ch * 2 for ch in h)
    if not re.fullmatch(r"[0-9a-f]{6}", h):
        raise ValueError(f"not a colour this check reads: {color!r} (use '#rrggbb' or 'rgb(r, g, b)')")
    return np.array([int(h[i:i + 2], 16) for i in (0, 2, 4)]) / 255


def _linear(s):
    return np.where(s <= 0.04045, s / 12.92, ((s + 0.055) / 1.055) ** 2.4)


def _srgb(v):
    v = np.clip(v, 0, 1)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * v ** (1 / 2.4) - 0.055)


def simulate(color: str, vision: str) -> np.ndarray:
    """sRGB (0..1) of `color` as seen with `vision` ('normal' or a key of CVD)."""
    s = rgb(color)
    return s if vision == "normal" else _srgb(CVD[vision] @ _linear(s))


def lab(s: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of an sRGB triple in 0..1."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ _linear(s)
    f = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(f > (6 / 29) ** 3, np.cbrt(f), f / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def distance(a: str, b: str, vision: str = "normal") -> float:
    """CIE76 delta E between two colours as seen with `vision`."""
    return float(np.linalg.norm(lab(simulate(a, vision)) - lab(simulate(b, vision))))


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21; text wants 4.5 or more)."""
    y = sorted((float(np.array([0.2126, 0.7152, 0.0722]) @ _linear(rgb(c))) for c in (a, b)), reverse=True)
    return (y[0] + 0.05) / (y[1] + 0.05)


def ink(fill: str) -> str:
    """The text colour (black or white) that reads better on a mark of colour `fill`."""
    return BLACK if contrast(fill, BLACK) >= contrast(fill, "#ffffff") else "#ffffff"


def closest_pair(colors, minimum: float = MIN_DELTA_E) -> tuple | None:
    """The first (a, b, vision, delta E) of `colors` closer than `minimum` in any vision, or None."""
    colors = list(dict.fromkeys(colors))
    for vision in ["normal", *CVD]:
        for i, a in enumerate(colors):
            for b in colors[i + 1:]:
                d = distance(a, b, vision)
                if d < minimum:
                    return a, b, vision, d
    return None
