"""lmbench_plugin: what any lmbench plugin written in Python needs, so that
the workload next to it is only a workload (the Go SDK's Serve, in small).

- load_protos() generates the protocol's message modules with gen.sh (once,
  into a cache directory keyed by the .proto files' hash) and imports them.
- Log writes go-plugin's hclog JSON lines to stderr, so the host re-logs
  each line at its level under the plugin's name.
- Plugin.main() answers `describe`, `version` and `binary-name` from the
  shell, and otherwise does go-plugin's side of the handshake: check the
  cookie, listen on a unix socket, print the one handshake line on stdout,
  and serve the plugin's service plus the ones go-plugin's host calls
  (grpc.health.v1.Health, plugin.GRPCController) until the host calls
  Shutdown or goes away.

Only Debian's python3-grpcio and python3-protobuf are used, and protoc's
--python_out: every service is served through grpcio's generic handlers.
"""

import datetime
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import types
from concurrent import futures

HERE = os.path.dirname(os.path.realpath(__file__))

# go-plugin's handshake (sdk/wire/wire.go): the cookie tells the plugin the
# lmbench host started it; 1 is go-plugin's core protocol and 1 lmbench's
# protocol major (the app protocol version).
COOKIE_KEY, COOKIE_VALUE = "LMBENCH_PLUGIN", "9c1b7e5a4f2d48b0a3e6c8d1f7b2a905"
CORE_PROTOCOL, APP_PROTOCOL = 1, 1
MAX_MESSAGE_BYTES = 256 << 20  # wire.MaxMessageBytes
PROTO_FILES = ("lmbench/plugin/v1/plugin.proto", "lmbench/workload/v1/workload.proto")

_LEVELS = {"trace": 0, "debug": 1, "info": 2, "warn": 3, "error": 4}


class Log:
    """Logs hclog JSON lines to the real stderr, at or above the level the
    host asks for in LMBENCH_PLUGIN_LOG_LEVEL (zerolog's level names)."""

    def __init__(self):
        self.min = _LEVELS.get(os.environ.get("LMBENCH_PLUGIN_LOG_LEVEL", "info"), 2)
        if os.environ.get("LMBENCH_PLUGIN_LOG_LEVEL") in ("fatal", "panic", "disabled"):
            self.min = 5
        self.out = sys.__stderr__
        self.lock = threading.Lock()

    def log(self, level, msg, **fields):
        if _LEVELS[level] < self.min:
            return
        # go-plugin parses @timestamp with exactly six fractional digits.
        ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        line = json.dumps({"@level": level, "@message": msg, "@timestamp": ts, **fields})
        with self.lock:
            self.out.write(line + "\n")
            self.out.flush()

    def debug(self, msg, **f): self.log("debug", msg, **f)
    def info(self, msg, **f): self.log("info", msg, **f)
    def warn(self, msg, **f): self.log("warn", msg, **f)
    def error(self, msg, **f): self.log("error", msg, **f)


class SetupError(Exception):
    """Something this machine lacks; the message says what to install."""


def proto_dir():
    """The protocol's .proto files: sdk/proto of the checkout this script
    lives in (a symlink to the script works: its real path counts), or a
    proto/ directory next to it."""
    for d in (os.path.join(HERE, "..", "..", "sdk", "proto"), os.path.join(HERE, "proto")):
        if all(os.path.isfile(os.path.join(d, f)) for f in PROTO_FILES):
            return os.path.normpath(d)
    raise SetupError(f"cannot find {PROTO_FILES[1]} in {HERE}/../../sdk/proto or {HERE}/proto")


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or (
        os.path.join(os.environ["HOME"], ".cache") if os.environ.get("HOME") else "")
    if not base:
        base = os.path.join(tempfile.gettempdir(), f"lmbench-cache-{os.getuid()}")
    return os.path.join(base, "lmbench", "python-plugin")


def load_protos():
    """Imports plugin_pb2 and workload_pb2, generating them first if this
    version of the .proto files (and of gen.sh) has not been generated yet."""
    src = proto_dir()
    h = hashlib.sha256()
    for path in (os.path.join(HERE, "gen.sh"),) + tuple(os.path.join(src, f) for f in PROTO_FILES):
        with open(path, "rb") as f:
            h.update(f.read())
    out = os.path.join(cache_root(), h.hexdigest()[:16])
    if not os.path.isdir(out):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        # Generate aside and rename, so a plugin starting at the same time
        # never imports half-written modules.
        tmp = tempfile.mkdtemp(prefix=".gen-", dir=os.path.dirname(out))
        run = subprocess.run(["/bin/sh", os.path.join(HERE, "gen.sh"), tmp, src],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if run.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise SetupError(f"generating the protocol modules failed: {run.stdout.strip()}")
        try:
            os.rename(tmp, out)
        except OSError:  # another plugin won the race: use its copy
            shutil.rmtree(tmp, ignore_errors=True)
    sys.path.insert(0, out)
    from lmbench.plugin.v1 import plugin_pb2
    from lmbench.workload.v1 import workload_pb2
    return types.SimpleNamespace(plugin=plugin_pb2, workload=workload_pb2)


def _health_service(data):
    """Decodes grpc.health.v1.HealthCheckRequest by hand, so no grpc health
    package is needed: its one field is 1, string service (tag 0x0a, then a
    one-byte length for any name shorter than 128 bytes); "" is the server."""
    if len(data) >= 2 and data[0] == 0x0A and data[1] < 0x80:
        return data[2:2 + data[1]].decode()
    return ""


SERVING = b"\x08\x01"  # HealthCheckResponse{status: SERVING}


class Plugin:
    """A workload plugin process: its canonical name and version. (An
    exporter would serve lmbench.exporter.v1.ExporterService the same way.)"""

    kind = "workload"
    service = "lmbench.workload.v1.WorkloadService"

    def __init__(self, name, version):
        self.name, self.version = name, version
        self.log = Log()

    def main(self, args, new):
        """Runs the plugin; new(protos, log) returns the object whose methods
        (named like the service's RPCs) answer the calls. Returns the exit code."""
        cmd = args[0] if args else ""
        if cmd == "version":
            print(f"{self.name} {self.version} (lmbench {self.kind} plugin, protocol v1.1, Python)")
            return 0
        if cmd == "binary-name":
            print(f"lmbench-{self.kind}-{self.name}")
            return 0
        if cmd != "describe" and os.environ.get(COOKIE_KEY) != COOKIE_VALUE:
            sys.stderr.write(f"This is the lmbench {self.kind} plugin {self.name!r}; lmbench starts it for you:\n"
                             f"  lmbench run --{self.kind}-plugin {sys.argv[0]}\n"
                             "Run it by hand with: describe | version | binary-name\n")
            return 1
        try:
            import grpc
            from google.protobuf import json_format
            protos = load_protos()
        except ImportError as e:
            self.log.error(f"{self.name} needs Debian's python3-grpcio and python3-protobuf ({e}): "
                           "apt-get install python3-grpcio python3-protobuf protobuf-compiler")
            return 1
        except SetupError as e:
            self.log.error(f"{self.name}: {e}")
            return 1
        impl = new(protos, self.log)
        if cmd == "describe":
            print(json_format.MessageToJson(impl.Describe(protos.workload.DescribeRequest())))
            return 0
        return self.serve(grpc, protos, impl)

    def serve(self, grpc, protos, impl):
        # Ctrl-C on a terminal reaches the whole process group; the host
        # handles it (drains, then stops us), as go-plugin's Serve does.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop = threading.Event()
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)])
        server.add_generic_rpc_handlers((
            self._service_handler(grpc, protos, impl),
            # go-plugin's host pings "plugin" through the standard health service.
            grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
                "Check": grpc.unary_unary_rpc_method_handler(self._health(grpc))}),
            # Its Kill calls Shutdown, then waits a moment for the process to exit.
            grpc.method_handlers_generic_handler("plugin.GRPCController", {
                "Shutdown": grpc.unary_unary_rpc_method_handler(lambda req, ctx: (stop.set(), b"")[1])}),
            # plugin.GRPCStdio is left out: the host reads our stderr itself
            # and only notes at debug level that the service is missing.
        ))
        sock_dir = tempfile.mkdtemp(prefix="plugin")
        sock = os.path.join(sock_dir, "plugin.sock")
        server.add_insecure_port("unix:" + sock)
        server.start()
        # The handshake: one line on stdout, then stdout is never used again.
        sys.stdout.write(f"{CORE_PROTOCOL}|{APP_PROTOCOL}|unix|{sock}|grpc\n")
        sys.stdout.flush()
        sys.stdout = sys.stderr  # a stray print lands in the host's debug log, not the pipe
        self.log.debug("serving", socket=sock)
        # The host's stdin is ours too (a terminal, /dev/null...), so its EOF
        # means nothing; the parent going away does.
        ppid = os.getppid()
        while not stop.wait(0.5):
            if os.getppid() != ppid:
                self.log.debug("the host went away")
                break
        server.stop(grace=1).wait()
        shutil.rmtree(sock_dir, ignore_errors=True)
        return 0

    def _service_handler(self, grpc, protos, impl):
        pkg = protos.workload
        desc = pkg.DESCRIPTOR.services_by_name[self.service.rsplit(".", 1)[1]]
        handlers = {}
        for m in desc.methods:
            fn = getattr(impl, m.name, None)
            if fn is None:
                continue  # grpc answers UNIMPLEMENTED
            handlers[m.name] = grpc.unary_unary_rpc_method_handler(
                self._call(grpc, m.name, fn),
                request_deserializer=getattr(pkg, m.input_type.name).FromString,
                response_serializer=getattr(pkg, m.output_type.name).SerializeToString)
        return grpc.method_handlers_generic_handler(self.service, handlers)

    def _call(self, grpc, name, fn):
        def call(req, ctx):
            try:
                return fn(req)
            except Exception as e:
                self.log.error(f"{name} failed: {e}", traceback=traceback.format_exc())
                ctx.abort(grpc.StatusCode.INTERNAL, f"{name}: {e}")
        return call

    def _health(self, grpc):
        def check(req, ctx):
            if _health_service(req) in ("", "plugin"):
                return SERVING
            ctx.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
        return check
