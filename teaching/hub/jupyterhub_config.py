# JupyterHub for a class on one server (`./dev hub`, teaching/hub/classhub.py).
# The class comes from the environment classhub.py sets (EDUTORCH_CLASS: the class
# folder, EDUTORCH_STUDENTS: how many student accounts, EDUTORCH_USER_PREFIX: how their
# names begin, EDUTORCH_SYSTEM_USERS: an OS user per account, ports, limits); docs/teaching.md.
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import classhub  # noqa: E402  (teaching/hub/classhub.py)

c = get_config()  # noqa: F821
env = os.environ
CLASS = Path(env["EDUTORCH_CLASS"])
prefix = env.get("EDUTORCH_USER_PREFIX", "")
instructor = classhub.instructor_name(prefix)
students = classhub.student_names(int(env.get("EDUTORCH_STUDENTS", "30")), prefix)
system_users = env.get("EDUTORCH_SYSTEM_USERS") == "1"

# where the hub listens; its own API and the proxy's on free local ports
c.JupyterHub.bind_url = f"http://{env.get('EDUTORCH_HUB_IP', '127.0.0.1')}:{env.get('EDUTORCH_HUB_PORT', '8000')}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(env.get("EDUTORCH_HUB_INTERNAL_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env.get('EDUTORCH_PROXY_API_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [env.get("EDUTORCH_PROXY", "configurable-http-proxy")]
# the hub's state in the class folder: a restart keeps accounts, servers' records and cookies
c.JupyterHub.db_url = f"sqlite:///{CLASS / 'hub' / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(CLASS / "hub" / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(CLASS / "hub" / "jupyterhub.pid")

# accounts: the instructor (an admin) and student01..studentNN, passwords in CLASS/accounts.csv
c.JupyterHub.authenticator_class = classhub.ClassPasswordAuthenticator
c.Authenticator.admin_users = {instructor}
c.Authenticator.allowed_users = set(students)

# one JupyterLab per account, a local process in CLASS/home/NAME: run as the account's own
# OS user (--system-users: the user's home is CLASS/home/NAME), or all as the hub's user
c.Spawner.args = []
if system_users:
    c.JupyterHub.spawner_class = classhub.SystemUserSpawner
else:
    c.JupyterHub.spawner_class = classhub.ClassSpawner
    c.SimpleLocalProcessSpawner.home_dir_template = str(CLASS / "home" / "{username}")
    if os.getuid() == 0:  # a container's root: Jupyter refuses root unless told
        c.Spawner.args.append("--ServerApp.allow_root=True")
if classhub.course_module()._kernel_encryption_configurable():
    # kernels talk to their server over CurveZMQ, as ./dev grade's (ipykernel warns about plain-text TCP)
    c.Spawner.args.append("--KernelManager.transport_encryption=auto")
c.Spawner.cmd = classhub.server_command()  # jupyterhub-singleuser, started 2 CPU s faster
c.Spawner.default_url = "/lab"
mem_limit = env.get("EDUTORCH_MEM_LIMIT", "2G")  # bytes, or with a suffix: 1536M, 2G
c.Spawner.mem_limit = int(mem_limit) if mem_limit.isdigit() else mem_limit
c.Spawner.http_timeout = 60
c.Spawner.environment = {
    "EDUTORCH_EXCHANGE": str(CLASS / "exchange"),  # read by teaching/hub/*/nbgrader_config.py
    "EDUTORCH_SYSTEM_USERS": "1" if system_users else "",  # a submission's owner is its student
    # one BLAS thread per kernel: thirty students share the machine's cores
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
}

# idle servers stopped (jupyterhub-idle-culler): their memory goes back to the class
c.JupyterHub.services = []
c.JupyterHub.load_roles = []
try:
    import jupyterhub_idle_culler  # noqa: F401
except ImportError:
    pass
else:
    c.JupyterHub.services.append({
        "name": "idle-culler",
        "command": [sys.executable, "-m", "jupyterhub_idle_culler",
                    f"--timeout={env.get('EDUTORCH_IDLE_TIMEOUT', '3600')}"],
    })
    c.JupyterHub.load_roles.append({
        "name": "idle-culler", "services": ["idle-culler"],
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    })

# an API token for scripts (and the tests): start, stop and use any server of the class
if env.get("EDUTORCH_HUB_API_TOKEN"):
    c.JupyterHub.services.append({"name": "class-admin", "api_token": env["EDUTORCH_HUB_API_TOKEN"]})
    c.JupyterHub.load_roles.append({
        "name": "class-admin", "services": ["class-admin"],
        "scopes": ["admin:users", "admin:servers", "tokens", "access:servers", "list:users"],
    })
