#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cri.py - the kubelet's side of the CRI, as much as test/containers needs.

    cri.py SOCKET version
    cri.py SOCKET pull IMAGE                     -> the image_ref (repo digest)
    cri.py SOCKET runp POD.json                  -> the pod sandbox id
    cri.py SOCKET create POD_ID CONTAINER.json POD.json  -> the container id
    cri.py SOCKET start|stop|rm CONTAINER_ID
    cri.py SOCKET status CONTAINER_ID            -> "STATE PID IMAGE"
    cri.py SOCKET checkpoint CONTAINER_ID ARCHIVE [TIMEOUT_S]
    cri.py SOCKET stopp|rmp POD_ID

SOCKET is containerd's gRPC socket (its CRI plugin serves runtime.v1 there).
POD.json and CONTAINER.json are a PodSandboxConfig and a ContainerConfig in
the protobuf JSON mapping, holding only the fields cri.proto has: the
messages come from cri.proto beside this file (the subset of the published
CRI API the test uses, same field numbers), compiled with protoc into a
temporary directory at each run.  A crictl config with other fields is
refused, naming the field.

Exit 0 on success; on a gRPC error one line "cri.py: CALL: CODE: DETAILS" on
stderr and exit 1; a usage error (bad arguments, an unreadable or unknown
JSON config, no protoc) one line and exit 2.
"""
import json
import os
import subprocess
import sys
import tempfile

import grpc
from google.protobuf import json_format

HERE = os.path.dirname(os.path.abspath(__file__))
SERVICE = "/runtime.v1.RuntimeService/"
IMAGES = "/runtime.v1.ImageService/"


def usage(msg):
    print("cri.py: " + msg, file=sys.stderr)
    sys.exit(2)


def load_messages():
    """cri_pb2 compiled from cri.proto (protoc --python_out)."""
    with tempfile.TemporaryDirectory(prefix="cri-pb.") as out:
        try:
            subprocess.run(["protoc", "-I", HERE, "--python_out", out, "cri.proto"], check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            usage("cannot compile %s/cri.proto with protoc (Debian: protobuf-compiler): %s" % (HERE, e))
        sys.path.insert(0, out)
        import cri_pb2  # noqa: E402  (generated just now)
        sys.path.pop(0)
    return cri_pb2


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    sock, cmd, args = argv[1], argv[2], argv[3:]
    pb = load_messages()
    chan = grpc.insecure_channel("unix://" + os.path.abspath(sock))

    def call(name, req, resp_type, timeout=120, service=SERVICE):
        rpc = chan.unary_unary(service + name, request_serializer=type(req).SerializeToString,
                               response_deserializer=resp_type.FromString)
        try:
            return rpc(req, timeout=timeout)
        except grpc.RpcError as e:
            print("cri.py: %s: %s: %s" % (name, e.code().name, e.details()), file=sys.stderr)
            sys.exit(1)

    def from_json(path, msg):
        try:
            with open(path) as f:
                return json_format.ParseDict(json.load(f), msg)
        except (OSError, ValueError, json_format.ParseError) as e:
            usage("%s: not a %s this client knows (cri.proto): %s" % (path, msg.DESCRIPTOR.name, e))

    if cmd == "version" and not args:
        r = call("Version", pb.VersionRequest(version="v1"), pb.VersionResponse, 10)
        print(r.runtime_name, r.runtime_version, r.runtime_api_version)
    elif cmd == "pull" and len(args) == 1:
        r = call("PullImage", pb.PullImageRequest(image=pb.ImageSpec(image=args[0])), pb.PullImageResponse,
                 service=IMAGES)
        print(r.image_ref)
    elif cmd == "runp" and len(args) == 1:
        cfg = from_json(args[0], pb.PodSandboxConfig())
        print(call("RunPodSandbox", pb.RunPodSandboxRequest(config=cfg), pb.RunPodSandboxResponse).pod_sandbox_id)
    elif cmd == "create" and len(args) == 3:
        req = pb.CreateContainerRequest(pod_sandbox_id=args[0],
                                        config=from_json(args[1], pb.ContainerConfig()),
                                        sandbox_config=from_json(args[2], pb.PodSandboxConfig()))
        print(call("CreateContainer", req, pb.CreateContainerResponse).container_id)
    elif cmd == "start" and len(args) == 1:
        call("StartContainer", pb.StartContainerRequest(container_id=args[0]), pb.StartContainerResponse)
    elif cmd == "stop" and len(args) == 1:
        call("StopContainer", pb.StopContainerRequest(container_id=args[0], timeout=0), pb.StopContainerResponse)
    elif cmd == "rm" and len(args) == 1:
        call("RemoveContainer", pb.RemoveContainerRequest(container_id=args[0]), pb.RemoveContainerResponse)
    elif cmd == "status" and len(args) == 1:
        r = call("ContainerStatus", pb.ContainerStatusRequest(container_id=args[0], verbose=True),
                 pb.ContainerStatusResponse)
        info = json.loads(r.info.get("info", "{}"))
        print(pb.ContainerState.Name(r.status.state), info.get("pid", 0), r.status.image.image)
    elif cmd == "checkpoint" and len(args) in (2, 3):
        if len(args) == 3 and not args[2].isdigit():
            usage("checkpoint: TIMEOUT_S must be a number of seconds, not %r" % args[2])
        t = int(args[2]) if len(args) == 3 else 120
        call("CheckpointContainer", pb.CheckpointContainerRequest(
            container_id=args[0], location=os.path.abspath(args[1]), timeout=t),
            pb.CheckpointContainerResponse, t + 30)
    elif cmd == "stopp" and len(args) == 1:
        call("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=args[0]), pb.StopPodSandboxResponse)
    elif cmd == "rmp" and len(args) == 1:
        call("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=args[0]), pb.RemovePodSandboxResponse)
    else:
        print("cri.py: unknown command or arguments: %s (see the head of %s)" % (" ".join(argv[2:]), argv[0]),
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
