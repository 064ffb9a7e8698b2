# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST DOUBLE of a Kubernetes API server: just enough for kubernetes.core to run the volcano role.

No Kubernetes API server can run on the project's machines, so this in-memory HTTP server
stands in for one in the unit tests (tests/unit/roles/test_volcano_converge.py). It is NOT
Kubernetes: static discovery (core, apps, scheduling.k8s.io, node.k8s.io, apiextensions and the
two Volcano groups, served from the start), GET/LIST (label selectors of the form k=v), POST,
PUT, DELETE, and PATCH applied as a JSON merge patch (strategic merge approximated); writes with
dryRun (what kubernetes.core sends in check mode) answer without storing. Its only
behaviour: a Deployment reports all replicas ready, and a Volcano Job completes at once with all
its replicas succeeded unless its first container image contains "never-schedules" (then it
stays Pending, as a gang that cannot be placed). resourceVersion changes only when an object does.

For kubernetes.core.k8s_drain (playbooks/rolling_driver_upgrade.yml, molecule scenario
rolling_upgrade): a Node always has a ``spec``; cordon is the PATCH of ``spec.unschedulable``;
pods are listed with a field selector of the form ``a.b=v`` (``spec.nodeName=gpu-01``); the
``eviction`` subresource of a pod (POST) deletes the pod at once (no PodDisruptionBudget, no
grace period). Run on its own (``python3 fake_kube_apiserver.py --bind ADDR --objects FILE
--url-file FILE --lifetime SECONDS``) it serves the objects of a JSON file until the lifetime
is over, then exits: a lab scenario starts it on the controller and reads its state over HTTP.
``--stop URL_FILE`` stops the double started with that ``--url-file`` (its scenario's destroy).
"""

import argparse
import copy
import itertools
import json
import os
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

RESOURCES = {
    ('', 'v1'): [('nodes', 'Node', False), ('namespaces', 'Namespace', False), ('configmaps', 'ConfigMap', True),
                 ('pods', 'Pod', True), ('services', 'Service', True)],
    ('apps', 'v1'): [('deployments', 'Deployment', True), ('daemonsets', 'DaemonSet', True)],
    ('scheduling.k8s.io', 'v1'): [('priorityclasses', 'PriorityClass', False)],
    ('node.k8s.io', 'v1'): [('runtimeclasses', 'RuntimeClass', False)],
    ('apiextensions.k8s.io', 'v1'): [('customresourcedefinitions', 'CustomResourceDefinition', False)],
    ('scheduling.volcano.sh', 'v1beta1'): [('queues', 'Queue', False), ('podgroups', 'PodGroup', True)],
    ('batch.volcano.sh', 'v1alpha1'): [('jobs', 'Job', True)],
}
VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


class FakeCluster(object):
    def __init__(self, version='v1.30.4', nodes=None):
        self.version = version
        self.objects = {}  # (group, plural, namespace, name) -> object
        self.counter = itertools.count(100)
        self.lock = threading.Lock()
        self.requests = []
        for node in nodes or []:
            self.put('', 'v1', 'nodes', None, node)

    def _status(self, group, version, plural, obj):
        kind = obj.get('kind')
        if kind == 'Deployment':
            replicas = obj.get('spec', {}).get('replicas', 1)
            obj['status'] = {'observedGeneration': obj['metadata'].get('generation', 1), 'replicas': replicas,
                             'readyReplicas': replicas, 'updatedReplicas': replicas, 'availableReplicas': replicas,
                             'conditions': [{'type': 'Available', 'status': 'True'},
                                            {'type': 'Progressing', 'status': 'True',
                                             'reason': 'NewReplicaSetAvailable'}]}
        elif kind == 'Job' and group == 'batch.volcano.sh':
            tasks = obj.get('spec', {}).get('tasks', [])
            total = sum(t.get('replicas', 0) for t in tasks)
            image = ((tasks[0]['template']['spec']['containers'][0].get('image')) if tasks else '') or ''
            if 'never-schedules' in image:
                obj['status'] = {'state': {'phase': 'Pending'}, 'pending': total}
            else:
                obj['status'] = {'state': {'phase': 'Completed'}, 'succeeded': total, 'minAvailable':
                                 obj['spec'].get('minAvailable', total)}

    def put(self, group, version, plural, namespace, obj, existing=None, dry_run=False):
        if obj.get('kind') == 'Node':
            obj.setdefault('spec', {})
        meta = obj.setdefault('metadata', {})
        if namespace:
            meta['namespace'] = namespace
        if existing is not None:
            meta['uid'] = existing['metadata']['uid']
            meta['creationTimestamp'] = existing['metadata']['creationTimestamp']
            old = copy.deepcopy(existing)
            meta['resourceVersion'] = existing['metadata']['resourceVersion']
            meta['generation'] = existing['metadata'].get('generation', 1)
            if obj.get('spec') != old.get('spec'):
                meta['generation'] += 1
        else:
            meta.update(uid='uid-%d' % next(self.counter), creationTimestamp='2026-01-01T00:00:00Z', generation=1)
        obj = copy.deepcopy(obj)
        meta = obj['metadata']
        self._status(group, version, plural, obj)
        if existing is None or obj != existing:
            meta['resourceVersion'] = str(next(self.counter))
        if not dry_run:
            self.objects[(group, plural, namespace or None, meta['name'])] = obj
        return obj

    def get(self, group, plural, namespace, name):
        return self.objects.get((group, plural, namespace or None, name))


def _field(obj, path):
    """The value at a dotted ``path`` of ``obj`` (None when absent), as text for comparison."""
    for key in path.split('.'):
        obj = obj.get(key) if isinstance(obj, dict) else None
    return None if obj is None else str(obj)


def _discovery_resources(group, version):
    return [{'name': plural, 'singularName': kind.lower(), 'namespaced': namespaced, 'kind': kind, 'verbs': VERBS}
            for plural, kind, namespaced in RESOURCES[(group, version)]]


def make_handler(cluster):
    kinds = dict(((g, p), (v, k, n)) for (g, v), items in RESOURCES.items() for p, k, n in items)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _send(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self):
            length = int(self.headers.get('Content-Length') or 0)
            return json.loads(self.rfile.read(length) or b'{}') if length else {}

        def _not_found(self, what):
            self._send(404, {'kind': 'Status', 'apiVersion': 'v1', 'status': 'Failure', 'reason': 'NotFound',
                             'code': 404, 'message': '%s not found' % what})

        def _route(self):
            url = urlparse(self.path)
            parts = [p for p in url.path.split('/') if p]
            query = parse_qs(url.query)
            if parts[:1] == ['api']:
                group, version, rest = '', parts[1] if len(parts) > 1 else None, parts[2:]
            elif parts[:1] == ['apis']:
                group = parts[1] if len(parts) > 1 else None
                version = parts[2] if len(parts) > 2 else None
                rest = parts[3:]
            else:
                return None
            namespace = None
            if rest[:1] == ['namespaces'] and len(rest) >= 3:
                namespace, rest = rest[1], rest[2:]
            plural = rest[0] if rest else None
            name = rest[1] if len(rest) > 1 else None
            self.subresource = rest[2] if len(rest) > 2 else None
            return parts, group, version, namespace, plural, name, query

        def do_GET(self):  # noqa: N802
            cluster.requests.append(('GET', self.path))
            url = urlparse(self.path)
            if url.path == '/version':
                minor = cluster.version.split('.')[1]
                return self._send(200, {'major': '1', 'minor': minor, 'gitVersion': cluster.version,
                                        'platform': 'linux/amd64'})
            if url.path == '/api':
                return self._send(200, {'kind': 'APIVersions', 'versions': ['v1']})
            if url.path == '/apis':
                groups = [{'name': g, 'versions': [{'groupVersion': '%s/%s' % (g, v), 'version': v}],
                           'preferredVersion': {'groupVersion': '%s/%s' % (g, v), 'version': v}}
                          for (g, v) in RESOURCES if g]
                return self._send(200, {'kind': 'APIGroupList', 'apiVersion': 'v1', 'groups': groups})
            route = self._route()
            if route is None:
                return self._not_found(self.path)
            parts, group, version, namespace, plural, name, query = route
            if plural is None:
                if (group, version) not in RESOURCES:
                    return self._not_found(self.path)
                return self._send(200, {'kind': 'APIResourceList', 'groupVersion': '/'.join(filter(None, [group, version])),
                                        'resources': _discovery_resources(group, version)})
            if (group, plural) not in kinds:
                return self._not_found(plural)
            with cluster.lock:
                if name:
                    obj = cluster.get(group, plural, namespace, name)
                    return self._send(200, obj) if obj else self._not_found(name)
                selector = dict(s.split('=', 1) for s in (query.get('labelSelector', [''])[0].split(',')) if '=' in s)
                fields = dict(s.split('=', 1) for s in (query.get('fieldSelector', [''])[0].split(',')) if '=' in s)
                items = [copy.deepcopy(o) for (g, p, ns, _n), o in sorted(cluster.objects.items(), key=lambda i: str(i[0]))
                         if g == group and p == plural and (namespace is None or ns == namespace)
                         and all((o['metadata'].get('labels') or {}).get(k) == v for k, v in selector.items())
                         and all(_field(o, k) == v for k, v in fields.items())]
                kind = kinds[(group, plural)][1]
                return self._send(200, {'kind': kind + 'List', 'apiVersion': '/'.join(filter(None, [group, version])),
                                        'metadata': {'resourceVersion': str(next(cluster.counter))}, 'items': items})

        def do_POST(self):  # noqa: N802
            cluster.requests.append(('POST', self.path))
            _parts, group, version, namespace, plural, name, query = self._route()
            body = self._body()
            if plural == 'pods' and self.subresource == 'eviction':
                with cluster.lock:
                    key = (group, plural, namespace or None, name)
                    pod = cluster.objects.get(key) if 'dryRun' in query else cluster.objects.pop(key, None)
                if not pod:
                    return self._not_found(name)
                return self._send(201, {'kind': 'Status', 'apiVersion': 'v1', 'status': 'Success', 'code': 201})
            with cluster.lock:
                if cluster.get(group, plural, namespace, body['metadata']['name']):
                    return self._send(409, {'kind': 'Status', 'apiVersion': 'v1', 'status': 'Failure',
                                            'reason': 'AlreadyExists', 'code': 409, 'message': 'exists'})
                return self._send(201, copy.deepcopy(cluster.put(group, version, plural, namespace, body,
                                                                 dry_run='dryRun' in query)))

        def do_PUT(self):  # noqa: N802
            cluster.requests.append(('PUT', self.path))
            _parts, group, version, namespace, plural, name, query = self._route()
            body = self._body()
            with cluster.lock:
                existing = cluster.get(group, plural, namespace, name)
                if not existing:
                    return self._not_found(name)
                return self._send(200, copy.deepcopy(cluster.put(group, version, plural, namespace, body,
                                                                 copy.deepcopy(existing), 'dryRun' in query)))

        def do_PATCH(self):  # noqa: N802
            cluster.requests.append(('PATCH', self.path))
            _parts, group, version, namespace, plural, name, query = self._route()
            body = self._body()
            with cluster.lock:
                existing = cluster.get(group, plural, namespace, name)
                if not existing:
                    return self._not_found(name)
                patched = merge_patch(existing, body)
                patched['metadata']['resourceVersion'] = existing['metadata']['resourceVersion']
                return self._send(200, copy.deepcopy(cluster.put(group, version, plural, namespace, patched,
                                                                 copy.deepcopy(existing), 'dryRun' in query)))

        def do_DELETE(self):  # noqa: N802
            cluster.requests.append(('DELETE', self.path))
            _parts, group, _version, namespace, plural, name, query = self._route()
            with cluster.lock:
                key = (group, plural, namespace or None, name)
                obj = cluster.objects.get(key) if 'dryRun' in query else cluster.objects.pop(key, None)
            return self._send(200, obj) if obj else self._not_found(name)

    return Handler


def serve(cluster, address='127.0.0.1'):
    """Start the double on a free port of ``address``; returns (server, url). Stop with server.shutdown()."""
    server = ThreadingHTTPServer((address, 0), make_handler(cluster))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, 'http://%s:%d' % (address, server.server_address[1])


def main(argv=None):
    parser = argparse.ArgumentParser(description='TEST DOUBLE of a Kubernetes API server (see the module text).')
    parser.add_argument('--bind', default='127.0.0.1', help='address to listen on (a free port is chosen)')
    parser.add_argument('--objects', help='JSON file: a list of objects (kind, apiVersion, metadata...) to start with')
    parser.add_argument('--url-file', help='where to write the URL it serves, once it listens (required to serve); '
                        'its process id goes to the same name with .pid added')
    parser.add_argument('--lifetime', type=int, default=1800, help='seconds to serve before exiting (bounded)')
    parser.add_argument('--stop', metavar='URL_FILE', help='stop the double started with this --url-file, if it runs')
    args = parser.parse_args(argv)
    if args.stop:
        print(stop(args.stop + '.pid'))
        return 0
    if not args.url_file:
        parser.error('--url-file is required to serve')
    cluster = FakeCluster()
    plurals = dict(((g, k), (v, p, n)) for (g, v), items in RESOURCES.items() for p, k, n in items)
    if args.objects:
        with open(args.objects) as fh:
            for obj in json.load(fh):
                group = obj['apiVersion'].rpartition('/')[0]
                version, plural, namespaced = plurals[(group, obj['kind'])]
                cluster.put(group, version, plural, obj['metadata'].get('namespace') if namespaced else None, obj)
    server, url = serve(cluster, args.bind)
    with open(args.url_file + '.tmp', 'w') as fh:
        fh.write(url + '\n')
    os.replace(args.url_file + '.tmp', args.url_file)
    with open(args.url_file + '.pid', 'w') as fh:
        fh.write('%d\n' % os.getpid())
    time.sleep(max(args.lifetime, 1))
    server.shutdown()
    return 0


def stop(pid_file):
    """Stop the double whose process id ``pid_file`` holds, when that process is still this double
    (a process id can be reused); say what was done."""
    try:
        with open(pid_file) as fh:
            pid = int(fh.read().strip())
    except (IOError, OSError, ValueError):
        return 'not running: no process id in %s' % pid_file
    try:
        with open('/proc/%d/cmdline' % pid, 'rb') as fh:
            cmdline = fh.read()
    except (IOError, OSError):
        cmdline = b''
    os.remove(pid_file)
    if b'fake_kube_apiserver' not in cmdline:
        return 'not running: process %d is gone or is not the double' % pid
    os.kill(pid, signal.SIGTERM)
    return 'stopped process %d' % pid


if __name__ == '__main__':
    raise SystemExit(main())
