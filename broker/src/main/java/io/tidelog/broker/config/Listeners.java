package io.tidelog.broker.config;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.security.auth.SecurityProtocol;

/**
 * The broker's listeners as Kafka configures them: {@code listeners} (where it binds), {@code
 * advertised.listeners} (what Metadata tells clients of each listener; by default the listeners
 * themselves), {@code listener.security.protocol.map} (each name's security protocol) and {@code
 * inter.broker.listener.name} (which listener followers fetch through; by default the one named
 * {@code security.inter.broker.protocol}). Names are unique and upper case; every advertised name
 * is a listener.
 */
public record Listeners(List<Listener> bound, List<Listener> advertised, String interBrokerName) {
  static final String DEFAULT_PROTOCOL_MAP =
      "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL";

  static Listeners parse(
      List<String> listeners,
      List<String> advertisedListeners,
      List<String> protocolMap,
      String interBrokerName,
      String interBrokerProtocol) {
    Map<String, SecurityProtocol> protocols = protocols(protocolMap);
    List<Listener> bound = parseAll(BrokerConfig.LISTENERS, listeners, protocols);
    List<Listener> advertised =
        advertisedListeners == null
            ? bound
            : parseAll(BrokerConfig.ADVERTISED_LISTENERS, advertisedListeners, protocols);
    Set<String> boundNames = new HashSet<>();
    bound.forEach(l -> boundNames.add(l.name()));
    for (Listener l : advertised) {
      if (!boundNames.contains(l.name())) {
        throw new ConfigException(
            BrokerConfig.ADVERTISED_LISTENERS,
            advertisedListeners,
            "advertises " + l.name() + ", which is not one of the listeners");
      }
    }
    String interBroker;
    if (interBrokerName != null) {
      interBroker = interBrokerName.toUpperCase(Locale.ROOT);
    } else {
      interBroker = interBrokerProtocol.toUpperCase(Locale.ROOT);
    }
    if (advertised.stream().noneMatch(l -> l.name().equals(interBroker))) {
      throw new ConfigException(
          interBrokerName != null
              ? BrokerConfig.INTER_BROKER_LISTENER_NAME
              : BrokerConfig.SECURITY_INTER_BROKER_PROTOCOL,
          interBroker,
          "the inter-broker listener must be one of the advertised listeners "
              + advertised.stream().map(Listener::name).toList()
              + "; set inter.broker.listener.name");
    }
    return new Listeners(bound, advertised, interBroker);
  }

  /** The bound listener named {@code name}, if any. */
  public Optional<Listener> bound(String name) {
    return bound.stream().filter(l -> l.name().equals(name)).findFirst();
  }

  public Listener interBroker() {
    return advertised.stream().filter(l -> l.name().equals(interBrokerName)).findFirst().get();
  }

  private static Map<String, SecurityProtocol> protocols(List<String> entries) {
    Map<String, SecurityProtocol> protocols = new LinkedHashMap<>();
    for (String entry : entries) {
      int colon = entry.indexOf(':');
      if (colon <= 0) {
        throw new ConfigException(
            BrokerConfig.LISTENER_SECURITY_PROTOCOL_MAP, entries, "expected NAME:PROTOCOL");
      }
      String name = entry.substring(0, colon).trim().toUpperCase(Locale.ROOT);
      String protocol = entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT);
      if (!SecurityProtocol.names().contains(protocol)) {
        throw new ConfigException(
            BrokerConfig.LISTENER_SECURITY_PROTOCOL_MAP,
            entries,
            protocol + " is not a security protocol; one of " + SecurityProtocol.names());
      }
      if (protocols.put(name, SecurityProtocol.forName(protocol)) != null) {
        throw new ConfigException(
            BrokerConfig.LISTENER_SECURITY_PROTOCOL_MAP, entries, name + " is mapped twice");
      }
    }
    return protocols;
  }

  private static List<Listener> parseAll(
      String key, List<String> specs, Map<String, SecurityProtocol> protocols) {
    List<Listener> parsed = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (String spec : specs) {
      Listener listener = parse(key, spec, protocols);
      if (!names.add(listener.name())) {
        throw new ConfigException(key, specs, "names " + listener.name() + " twice");
      }
      parsed.add(listener);
    }
    if (parsed.isEmpty()) {
      throw new ConfigException(key, specs, "names no listener");
    }
    return List.copyOf(parsed);
  }

  private static Listener parse(String key, String spec, Map<String, SecurityProtocol> protocols) {
    int scheme = spec.indexOf("://");
    int colon = spec.lastIndexOf(':');
    if (scheme <= 0 || colon <= scheme + 2) {
      throw new ConfigException(key, spec, "expected NAME://host:port");
    }
    String name = spec.substring(0, scheme).toUpperCase(Locale.ROOT);
    SecurityProtocol protocol = protocols.get(name);
    if (protocol == null) {
      throw new ConfigException(
          key,
          spec,
          "no security protocol for listener "
              + name
              + " in "
              + BrokerConfig.LISTENER_SECURITY_PROTOCOL_MAP);
    }
    String host = spec.substring(scheme + 3, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(spec.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new ConfigException(key, spec, "the port is not a number");
    }
    if (port < 0 || port > 65535) {
      throw new ConfigException(key, spec, "port out of range");
    }
    return new Listener(name, protocol, host, port);
  }
}
