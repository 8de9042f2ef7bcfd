"""What a notebook shows and how it talks to the library: ``%%cuda``, the banner, figures and explorers.

Modules: ``setup`` (``cl.setup()``: the magic, figure settings, the backend banner), ``magic``
(``%%cuda`` cells), ``draw`` (plotly figures from simulator runs), ``listing`` (annotated sources and
metric tables, HTML and text), ``widgets`` (explorers whose charts follow their controls), ``fit``
(titles that fit), ``palette`` (the colours). Nothing here compiles or runs a kernel by itself.
"""
