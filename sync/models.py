"""The sync keeps no tables of its own beyond its hosted repositories on disk.

What is left to do per Sync or GitRepository is a work item of the controller
runtime (``kapi_work_item``, ``sync.controllers``), and how far the sync has
read the change log is the runtime's ``sync`` feed cursor (``kapi_feed_cursor``).
"""
