package io.tidelog.broker.replica;

/**
 * A log directory of this broker ({@code log.dirs}), as DescribeLogDirs reports it.
 *
 * @param dir its absolute path
 * @param totalBytes the size of its file system, or -1 when it is offline
 * @param usableBytes what its file system has free for this process, or -1 when it is offline
 */
public record LogDirStatus(String dir, boolean offline, long totalBytes, long usableBytes) {}
