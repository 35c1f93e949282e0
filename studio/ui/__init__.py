"""The desktop studio's widgets and main window (PySide6).

Widgets only show values and turn clicks into requests to a
:class:`studio.desktop.session.ProjectSession`; no widget reads the project database,
loads a model or waits on a thread. ``studio.ui.app.main`` is the entry point.
"""
