"""Two "machines" on one: Linux network namespaces joined by a veth pair, the link shaped with tc
(tbf), each namespace with its own host name (unshare --uts, and /etc/netns/NAME/hosts, which
`ip netns exec` mounts over /etc/hosts), and one torchrun per "host". Shared by the two-host test
(tests/apps/two_hosts_test.py) and the scaling benchmark (bench/scale/run_two_hosts_bench.py). Needs root.

    with TwoHosts(rate="1gbit") as net:
        codes, outputs, seconds = net.torchrun_pair(work, "c10d", [form, form], [ATTN, "train", ...])

All traffic stays inside the namespaces it makes; they are deleted on exit, also on failure.
"""
import os
import shutil
import subprocess
import threading
import time

TORCHRUN = shutil.which("torchrun")


def sh(*args, check=True):
    p = subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stdout.strip()}")
    return p


def unavailable():
    """Why two hosts cannot be made here, or None."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if not TORCHRUN:
        return "torchrun (python3-torch) is not installed"
    for tool in ("ip", "tc", "unshare"):
        if not shutil.which(tool):
            return f"{tool} (iproute2, util-linux) is missing"
    return None


class TwoHosts:
    """hosts[i]: {"ns", "dev", "addr", "name"}; hosts[0]["addr"] is where the others meet."""

    def __init__(self, rate="1gbit"):
        tag = str(os.getpid() % 100000)
        self.rate = rate
        self.hosts = [{"ns": f"attn{tag}a", "dev": f"at{tag}a", "addr": "10.99.0.1", "name": "attn-host-a"},
                      {"ns": f"attn{tag}b", "dev": f"at{tag}b", "addr": "10.99.0.2", "name": "attn-host-b"}]

    def __enter__(self):
        try:
            for h in self.hosts:
                sh("ip", "netns", "add", h["ns"])
            a, b = self.hosts
            sh("ip", "link", "add", a["dev"], "type", "veth", "peer", "name", b["dev"])
            for h in self.hosts:
                sh("ip", "link", "set", h["dev"], "netns", h["ns"])
                sh("ip", "-n", h["ns"], "addr", "add", h["addr"] + "/24", "dev", h["dev"])
                sh("ip", "-n", h["ns"], "link", "set", h["dev"], "up")
                sh("ip", "-n", h["ns"], "link", "set", "lo", "up")
                if self.rate:  # each way, as between two machines on one switch (no netem here: no added delay)
                    sh("ip", "netns", "exec", h["ns"], "tc", "qdisc", "add", "dev", h["dev"], "root", "tbf", "rate", self.rate, "burst",
                       "256kb", "latency", "50ms")
            self.hosts_file()
        except Exception:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        for h in self.hosts:
            sh("ip", "netns", "del", h["ns"], check=False)  # the veth pair goes with its namespaces
            shutil.rmtree(f"/etc/netns/{h['ns']}", ignore_errors=True)
        return False

    def hosts_file(self, own_name=None):
        """Every namespace's /etc/hosts: each host's name and address; with `own_name` (e.g.
        "127.0.1.1", as Debian's installer writes) each host maps its own name to that instead."""
        for me in self.hosts:
            d = f"/etc/netns/{me['ns']}"
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, "hosts"), "w") as f:
                f.write("127.0.0.1 localhost\n")
                for h in self.hosts:
                    f.write(f"{own_name if own_name and h is me else h['addr']} {h['name']}\n")

    def start(self, i, command):
        """Starts `command` on host i (its network namespace, its own UTS namespace with its name),
        its output (both streams) readable line by line from .stdout."""
        h = self.hosts[i]
        return subprocess.Popen(["ip", "netns", "exec", h["ns"], "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', h["name"],
                                 *command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def link(self, up):
        """Plugs the cable in or pulls it out (host 0's end)."""
        sh("ip", "-n", self.hosts[0]["ns"], "link", "set", self.hosts[0]["dev"], "up" if up else "down")

    def torchrun_pair(self, work, name, forms, program, timeout=300, nproc=1, while_running=None):
        """One torchrun per host (forms[i]: its rendezvous flags) starting `program` (a list: the
        binary, then its arguments) as `nproc` workers; returns ([exit codes], [outputs], seconds).
        while_running(procs, heads) runs once both have started (e.g. to pull the cable): it may
        read the processes' output (read_until), kept in heads."""
        procs = []
        t0 = time.time()
        for i in range(2):
            # bookworm's torchrun (torch 1.13, Python 3.11) needs --redirects/--tee/--log_dir to start workers.
            command = [TORCHRUN, "--nnodes", "2", "--nproc_per_node", str(nproc), *forms[i], "--redirects", "1", "--tee", "1", "--log_dir",
                       os.path.join(work, f"{name}-logs-{i}"), "--no_python", *program]
            procs.append(self.start(i, command))
        heads = ["", ""]
        if while_running:
            try:
                while_running(procs, heads)
            except Exception:
                for p in procs:
                    p.kill()
                raise
        timer = threading.Timer(max(1, timeout - (time.time() - t0)), lambda: [p.kill() for p in procs])
        timer.start()
        outputs = [heads[i] + procs[i].communicate()[0] for i in range(2)]  # the timer ends a hung pair
        timer.cancel()
        return [p.returncode for p in procs], outputs, time.time() - t0


def read_until(proc, heads, i, text):
    """Reads process i's output line by line (blocking) until a line holds `text`, keeping what it
    read in heads[i]; returns the seconds it took, or None if the output ended first."""
    t0 = time.time()
    for line in proc.stdout:
        heads[i] += line
        if text in line:
            return time.time() - t0
    return None


def c10d_form(host, port, run_id):
    return ["--rdzv_backend", "c10d", "--rdzv_endpoint", f"{host}:{port}", "--rdzv_id", run_id]


def static_forms(host, port):
    return [["--node_rank", str(i), "--master_addr", host, "--master_port", str(port)] for i in range(2)]

