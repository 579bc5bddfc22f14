"""Backends for the L7 proxy's end-to-end tests and benchmark: nginx (Debian's) serving files of
given sizes from a temp directory, and a small threaded HTTP/1.1 echo server in Python (nginx
cannot echo a request body without third-party modules)."""
import http.server
import os
import shutil
import socket
import subprocess
import threading

from waits import GUARD_S, wait_until


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port):
    """Whether 127.0.0.1:port accepts a connection now (refused: nothing listens yet)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=GUARD_S):
            return True
    except OSError:
        return False


def wait_listening(port, proc=None, guard_s=GUARD_S):
    """Waits until the port accepts (the server is ready: `fulcrum proxy` listens only once its
    chains are built); False if proc exits first or after guard_s (a hang)."""
    return wait_until(lambda: accepts(port), guard_s, proc=proc) is not None


NGINX_CONF = """
{user}
worker_processes {workers};
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log error;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {dir}/body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  keepalive_requests 1000000;
  keepalive_timeout 120s;
  client_max_body_size 64m;
  default_type application/octet-stream;
  {upstream}
  server {{
    listen 127.0.0.1:{port} reuseport;
    root {dir}/www;
    location = /return {{ return 200 "returned by nginx\\n"; }}
    location = /nocontent {{ return 204; }}
    {extra}
  }}
}}
"""


class Nginx:
    """nginx on a free port serving {dir}/www; `extra` goes into the server block, `upstream`
    into the http block (the benchmark's reverse-proxy configuration)."""

    def __init__(self, work, files, workers=1, extra="", upstream="", name="nginx"):
        self.dir = os.path.join(work, name)
        os.makedirs(os.path.join(self.dir, "www"), exist_ok=True)
        for fname, data in files.items():
            with open(os.path.join(self.dir, "www", fname), "wb") as f:
                f.write(data)
        self.port = free_port()
        user = "user root;" if os.geteuid() == 0 else ""
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(user=user, workers=workers, dir=self.dir, port=self.port,
                                      extra=extra, upstream=upstream))
        self.proc = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-c", conf,
                                      "-p", self.dir], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        if not wait_listening(self.port, self.proc):
            raise RuntimeError("nginx did not start: " + self.proc.stderr.read().decode(errors="replace"))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class _Echo(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def _answer(self):
        body = self._body()
        head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                f"X-Method: {self.command}\r\nX-Tag: {self.headers.get('X-Tag', '')}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")
        self.wfile.write(head.encode() + body)  # one write: no Nagle wait between head and body

    do_POST = do_PUT = do_GET = _answer


class EchoServer:
    """Answers every request with its body (de-chunked), method and X-Tag header."""

    def __init__(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
