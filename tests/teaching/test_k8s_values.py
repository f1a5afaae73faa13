"""teaching/k8s/: the Zero to JupyterHub values and image of a class past one machine.

No cluster here (docs/teaching.md says what was not run): these check what can be
checked without one — the values parse, use the chart's keys, mount the exchange where
the class configuration looks for it, and the hub's role hook picks the same
configuration folders as ``./dev hub`` does.
"""
import pathlib
import types

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is in the [test] extra")

ROOT = pathlib.Path(__file__).resolve().parents[2]
K8S = ROOT / "teaching" / "k8s"
IMAGE_ROOT = "/opt/edutorch"  # where the Dockerfile puts the repository


def values():
    return yaml.safe_load((K8S / "values.yaml").read_text(encoding="utf-8"))


def test_values_use_the_charts_top_level_keys():
    chart_keys = {"hub", "proxy", "singleuser", "ingress", "prePuller", "custom", "cull", "debug",
                  "rbac", "global", "scheduling", "imagePullSecrets", "imagePullSecret"}
    assert set(values()) <= chart_keys
    single = values()["singleuser"]
    assert set(single["memory"]) == {"guarantee", "limit"} and set(single["cpu"]) == {"guarantee", "limit"}
    assert values()["cull"]["enabled"] is True


def test_the_exchange_is_mounted_where_the_class_configuration_reads_it():
    single = values()["singleuser"]
    (mount,) = single["storage"]["extraVolumeMounts"]
    assert mount["mountPath"] == single["extraEnv"]["EDUTORCH_EXCHANGE"]
    (volume,) = single["storage"]["extraVolumes"]
    assert volume["name"] == mount["name"]
    claim = yaml.safe_load((K8S / "exchange-pvc.yaml").read_text(encoding="utf-8"))
    assert volume["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert f"EDUTORCH_EXCHANGE={mount['mountPath']}" in (K8S / "Dockerfile").read_text()


@pytest.mark.parametrize("admin, role", [(True, "instructor"), (False, "student")])
def test_the_role_hook_gives_each_server_the_class_configuration(admin, role):
    namespace = {"c": types.SimpleNamespace(KubeSpawner=types.SimpleNamespace())}
    exec(values()["hub"]["extraConfig"]["edutorch-roles"], namespace)
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(admin=admin), environment={},
                                    mem_limit=None, mem_guarantee=None, cpu_limit=None, cpu_guarantee=None)
    namespace["c"].KubeSpawner.pre_spawn_hook(spawner)
    folder = spawner.environment["JUPYTER_CONFIG_PATH"]
    assert folder == f"{IMAGE_ROOT}/teaching/hub/{role}"
    assert (ROOT / folder.removeprefix(IMAGE_ROOT + "/") / "nbgrader_config.py").exists()
    assert (spawner.mem_limit is not None) == admin  # grading runs in the instructor's server
