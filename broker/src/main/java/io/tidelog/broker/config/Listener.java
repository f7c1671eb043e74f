package io.tidelog.broker.config;

import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * One listener, {@code NAME://host:port}, with the security protocol that {@code
 * listener.security.protocol.map} gives its name. An empty host binds every interface.
 */
public record Listener(String name, SecurityProtocol protocol, String host, int port) {
  public ListenerName listenerName() {
    return new ListenerName(name);
  }
}
