# `./dev lab` and `./dev lab --solutions`: JupyterLab's default settings for a learner come
# from lab-settings/overrides.json (a learner can still change them in Settings):
# - widgets save their state in the notebook, so a lesson saved after Run All reopens
#   with every widget's picture even when its kernel is gone (no "model not found").
from pathlib import Path

c = get_config()  # noqa: F821
c.LabApp.app_settings_dir = str(Path(__file__).resolve().parent / "lab-settings")
