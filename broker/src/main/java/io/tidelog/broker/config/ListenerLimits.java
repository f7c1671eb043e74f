package io.tidelog.broker.config;

/**
 * What one client may take of a listener, under Kafka's config names.
 *
 * @param requestMaxBytes {@code socket.request.max.bytes}: a larger frame closes the connection
 * @param queuedMaxRequestBytes {@code queued.max.request.bytes}: the memory that requests read but
 *     not yet answered may hold on the listener, together; -1 for no bound
 * @param maxConnections {@code max.connections}: beyond it a new connection is closed at once
 * @param maxConnectionsPerIp {@code max.connections.per.ip}: the same, per client address
 * @param connectionsMaxIdleMs {@code connections.max.idle.ms}: a connection that neither reads nor
 *     writes for this long is closed
 */
public record ListenerLimits(
    int requestMaxBytes,
    long queuedMaxRequestBytes,
    int maxConnections,
    int maxConnectionsPerIp,
    long connectionsMaxIdleMs) {}
