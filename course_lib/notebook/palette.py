"""The course's colours: one meaning each, the same in every chart and listing."""
OK, BAD, MAIN, PALE = "#2a9d8f", "#e63946", "#457b9d", "#a8dadc"   # ideal, not ideal, the subject, context
