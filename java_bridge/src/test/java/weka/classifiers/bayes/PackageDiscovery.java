package weka.classifiers.bayes;

import java.util.Arrays;

/**
 * Run in a child JVM whose class path holds only Weka: loads the installed packages and prints
 * whether the GUI's class discovery lists HDPBayesNet among the classifiers.
 */
public final class PackageDiscovery {

  private PackageDiscovery() {
  }

  public static void main(String[] args) throws Exception {
    weka.core.WekaPackageManager.loadPackages(false);
    weka.gui.GenericPropertiesCreator.regenerateGlobalOutputProperties();
    String list = weka.gui.GenericPropertiesCreator.getGlobalOutputProperties()
      .getProperty("weka.classifiers.Classifier", "");
    boolean found = Arrays.asList(list.split(",")).contains("weka.classifiers.bayes.HDPBayesNet");
    System.out.println("DISCOVERED=" + found);
    Class<?> c = Class.forName("weka.classifiers.bayes.HDPBayesNet", true,
      weka.core.WekaPackageClassLoaderManager.getWekaPackageClassLoaderManager().getPackageClassLoader("HDPBayesNet"));
    System.out.println("LOADED=" + c.getName());
  }
}
