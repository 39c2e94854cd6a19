"""Test doubles for graphmem (local fake servers; nothing here touches the network)."""
