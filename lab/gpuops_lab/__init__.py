"""The pieces of lab/lab.py, by concern (lab/lab.py is the command line that uses them).

common    settings from the environment, errors, running commands, the lab network's addresses
engine    Debian's docker.io and debootstrap, a running dockerd
images    the Debian node images (debootstrap + docker import), named by their recipe
network   the lab's docker network
services  long-running processes of a checkout (pid file + /proc), and who holds a port
mirror    the artifact mirror's HTTP server
aptcache  the package cache: an apt proxy for the Debian mirrors the lab uses
nodes     the lab's node containers (lab, molecule and benchmark nodes alike)
"""
